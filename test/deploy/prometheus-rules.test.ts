// The shipped alerting rules (deploy/prometheus): `promtool check rules` and `promtool test rules`
// must pass, and every rule must have a unit test in which it fires and one in which it does not.
// promtool comes from Debian's `prometheus` package (.ci/run installs it): in CI a missing
// promtool fails the suite; elsewhere these tests are skipped, saying so.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const dir = fileURLToPath(new URL("../../deploy/prometheus/", import.meta.url));
const RULES = "linewatch.rules.yml";
const TESTS = "linewatch.rules.test.yml";

const promtool = spawnSync("promtool", ["--version"], { encoding: "utf8" }).status === 0;
const skip = !promtool && !process.env.CI;
if (skip) console.warn("promtool is not installed (Debian package prometheus): the promtool tests of deploy/prometheus are skipped");

function run(...args: string[]): { status: number | null; output: string } {
  const r = spawnSync("promtool", args, { cwd: dir, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, output: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
}

interface RuleFile {
  groups: { name: string; rules: { alert?: string; record?: string; expr: string }[] }[];
}
interface TestFile {
  rule_files: string[];
  tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
}

describe("deploy/prometheus alerting rules", () => {
  it.skipIf(skip)("pass promtool check rules", () => {
    if (!promtool) throw new Error("promtool missing in CI: .ci/run installs the prometheus package");
    const r = run("check", "rules", RULES);
    expect(r.output).toMatch(/SUCCESS/);
    expect(r.status, r.output).toBe(0);
  });

  it.skipIf(skip)("pass their promtool unit tests", () => {
    if (!promtool) throw new Error("promtool missing in CI: .ci/run installs the prometheus package");
    const r = run("test", "rules", TESTS);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toMatch(/SUCCESS/);
  });

  it("each have a unit test that fires them and one that does not", () => {
    const rules = parse(readFileSync(`${dir}${RULES}`, "utf8")) as RuleFile;
    const tests = parse(readFileSync(`${dir}${TESTS}`, "utf8")) as TestFile;
    expect(tests.rule_files).toEqual([RULES]);
    const alerts = rules.groups.flatMap((g) => g.rules.flatMap((r) => (r.alert ? [r.alert] : [])));
    expect(alerts.length).toBeGreaterThan(0);
    const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const name of alerts) {
      const mine = cases.filter((c) => c.alertname === name);
      expect(
        mine.some((c) => (c.exp_alerts ?? []).length > 0),
        `${name}: no test where it fires`,
      ).toBe(true);
      expect(
        mine.some((c) => (c.exp_alerts ?? []).length === 0),
        `${name}: no test where it does not fire`,
      ).toBe(true);
    }
    // A test of an alert the rules no longer hold would pass vacuously.
    for (const c of cases) expect(alerts, `test of unknown alert ${c.alertname}`).toContain(c.alertname);
  });
});
