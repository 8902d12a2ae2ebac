// A schema change without its migration fails CI: generating again must produce nothing new.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync } from "node:fs";

// drizzle-kit wants a path relative to the working directory.
const out = ".linewatch/migration-check";
rmSync(out, { recursive: true, force: true });
mkdirSync(".linewatch", { recursive: true });
cpSync("drizzle", out, { recursive: true });
try {
  const printed = execFileSync(
    "npx",
    ["drizzle-kit", "generate", "--dialect", "postgresql", "--schema", "packages/db/src/schema/index.ts", "--out", out],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
  if (!/No schema changes/i.test(printed)) {
    console.error(printed);
    console.error("schema changed without a migration: run `npm run db:generate` and commit drizzle/");
    process.exit(1);
  }
  console.log("migrations: up to date with the schema");
} finally {
  rmSync(out, { recursive: true, force: true });
}
