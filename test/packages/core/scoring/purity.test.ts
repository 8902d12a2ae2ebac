// The scoring core and the protocol adapters stay pure: no I/O, no clock, no chance.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const ROOTS = ["scoring", "protocols"].map((dir) => new URL(`../../../../packages/core/src/${dir}/`, import.meta.url));
const FORBIDDEN = [
  /from\s+["']node:/,
  /\bDate\.now\s*\(/,
  /\bMath\.random\s*\(/,
  /\bfetch\s*\(/,
  /\bset(Timeout|Interval)\s*\(/,
  /\bprocess\./,
];

describe("purity", () => {
  for (const root of ROOTS) {
    for (const file of readdirSync(root).filter((f) => f.endsWith(".ts"))) {
      it(`${root.pathname.split("/").at(-2)}/${file} does no I/O and reads no clock`, () => {
        const source = readFileSync(new URL(file, root), "utf8");
        for (const pattern of FORBIDDEN) expect(source).not.toMatch(pattern);
      });
    }
  }
});
