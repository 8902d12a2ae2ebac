// A schema change without its migration fails CI: generating again must produce nothing new.
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const out = mkdtempSync(join(tmpdir(), "lw-migrations-"));
try {
  cpSync("drizzle", out, { recursive: true });
  const before = readdirSync(out).length;
  execFileSync("npx", ["drizzle-kit", "generate", "--dialect", "postgresql", "--schema", "packages/db/src/schema/index.ts", "--out", out], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const after = readdirSync(out);
  if (after.length !== before) {
    console.error(`schema changed without a migration: run \`npm run db:generate\` and commit drizzle/ (new: ${after.join(", ")})`);
    process.exit(1);
  }
  console.log("migrations: up to date with the schema");
} finally {
  rmSync(out, { recursive: true, force: true });
}
