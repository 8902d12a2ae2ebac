// health/, tables/ and schedule/ are pure: time and chance come in as arguments.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../../packages/core/src/", import.meta.url));
const FORBIDDEN = [
  /from\s+["']node:/,
  /\brequire\(/,
  /Date\.now\(/,
  /new Date\(/,
  /Math\.random\(/,
  /\bset(Timeout|Interval)\(/,
  /\bfetch\(/,
  /process\./,
];

describe("core purity", () => {
  for (const dir of ["health", "tables", "schedule"]) {
    for (const file of readdirSync(root + dir).filter((f) => f.endsWith(".ts"))) {
      it(`${dir}/${file} has no I/O, clock or randomness`, () => {
        const text = readFileSync(`${root}${dir}/${file}`, "utf8");
        for (const re of FORBIDDEN) expect(text, String(re)).not.toMatch(re);
      });
    }
  }
});
