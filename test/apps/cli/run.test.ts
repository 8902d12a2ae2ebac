import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../../apps/cli/src/run";
import { runCli } from "./run-cli";

// The command line handled in-process (same code as the binary, without a process per case):
// usage errors are exit 2 with a message that names what is wrong.

describe("usage errors exit 2 and say why", () => {
  it.each([
    [["frobnicate"], 'unknown command "frobnicate"'],
    [["lines"], "lines: which one? add, list, show, drain, enable, disable, rm"],
    [["lines", "fly"], "lines fly: unknown command"],
    [["lines", "list", "--tier", "paid"], "lines list: --tier does not apply here"],
    [["lines", "show"], "lines show: missing LINE"],
    [["lines", "show", "a", "b"], 'lines show: unexpected argument "b"'],
    [["lines", "add", "x", "--base-url", "http://h", "--model", "m"], "--tier is required"],
    [
      ["lines", "add", "x", "--tier", "paid", "--base-url", "http://h", "--model", "m", "--route", "chat=many"],
      "--route: expected ROUTE or ROUTE=WEIGHT",
    ],
    [
      ["lines", "add", "x", "--tier", "paid", "--base-url", "http://h", "--model", "m", "--timeout-ms", "1.5"],
      "--timeout-ms: expected an integer",
    ],
    [["events", "--limit", "lots"], "--limit: expected an integer"],
    [["events", "--since", "yesterday"], "--since: not a time"],
    [["apply"], "apply: -f FILE is required"],
    [["samples", "add", "x"], "--prompt is required"],
    [["tokens", "create", "x"], "--role admin|viewer|router is required"],
    [["--url", "ftp://x", "lines", "list"], "--url: must be http(s)"],
    [["--url"], "--url"],
  ])("%j", async (argv, message) => {
    const r = await runCli(argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });

  it("prints usage errors as JSON with --json", async () => {
    const r = await runCli(["lines", "show", "--json"]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr)).toMatchObject({ error: { code: "usage" } });
  });
});

describe("help", () => {
  it("lists every command, and each command has its own help", async () => {
    const main = await runCli(["--help"]);
    expect(main.code).toBe(0);
    for (const c of COMMANDS) {
      expect(main.stdout).toContain(c.name);
      const own = await runCli([...c.name.split(" "), "--help"]);
      expect(own.code, c.name).toBe(0);
      expect(own.stdout).toContain(`usage: linewatch ${c.name}`);
    }
    expect((await runCli(["help", "apply"])).stdout).toContain("--prune");
  });
});

describe("serve", () => {
  it("reads its options into the control plane's configuration, not into process.env: a bad one is exit 1 naming the setting", async () => {
    const before = { PORT: process.env.PORT, HOST: process.env.HOST, LINEWATCH_DATA_DIR: process.env.LINEWATCH_DATA_DIR };
    const r = await runCli(["serve", "--port", "99999", "--host", "127.0.0.9", "--data-dir", "/nonexistent/lw"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("PORT");
    expect(r.stdout).toBe("");
    expect({ PORT: process.env.PORT, HOST: process.env.HOST, LINEWATCH_DATA_DIR: process.env.LINEWATCH_DATA_DIR }).toEqual(before);
  });
});
