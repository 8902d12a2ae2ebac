// Lines nobody has judged (docs/health.md#new-lines): a line no sample applies to, and a new line
// before its first results, are `unprobed` (tone `unjudged`) at the probation share in the API, the
// tables, the CLI, the dashboard and the metrics, and their route warns.
import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLine, createRoute, probeNow } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { runCli } from "../cli/run-cli";

let cp: TestControlPlane;
let lab: Lab;
const ids: Record<string, string> = {};

interface Health {
  state: string;
  tone: string;
  weightFactor: number;
}
const health = async (name: string) => (await (await cp.request(`/v1/lines/${ids[name]}/health`)).json()) as Health;
const warnings = async () => ((await (await cp.request("/v1/routes/chat")).json()) as { warnings: string[] }).warnings;

beforeAll(async () => {
  lab = await startLab({ lines: [{ name: "judged" }, { name: "unjudged" }] });
  cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" } });
  await createRoute(cp, "chat");
  const sample = await cp.request("/v1/samples", {
    method: "POST",
    json: { name: "hello", protocol: "openai-chat", request: { messages: [{ role: "user", content: "Say hello." }] }, expect: {} },
  });
  expect(sample.status, await sample.clone().text()).toBe(201);
  ids.judged = (await createLine(cp, { name: "judged", baseUrl: lab.baseUrl("judged"), routes: [{ route: "chat", weight: 100 }] })).id;
  // The one sample is an OpenAI chat one: none applies to an Anthropic line.
  ids.unjudged = (
    await createLine(cp, {
      name: "unjudged",
      protocol: "anthropic-messages",
      baseUrl: lab.baseUrl("unjudged"),
      routes: [{ route: "chat", weight: 100 }],
    })
  ).id;
}, 60_000);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

describe("unprobed lines", () => {
  it("a new line is unprobed at the probation share before its first results, and its route says so", async () => {
    expect(await health("judged")).toMatchObject({ state: "unprobed", tone: "unjudged", weightFactor: 0.2 });
    const table = (await (await cp.request("/v1/tables/chat")).json()) as { mode: string; lines: { name: string; state: string }[] };
    expect(table.mode).toBe("normal");
    expect(Object.fromEntries(table.lines.map((l) => [l.name, l.state]))).toEqual({ judged: "unprobed", unjudged: "unprobed" });
    expect(await warnings()).toContain("judged not judged by a probe yet: unprobed at the probation share until its first results");
  });

  it("a line no sample applies to stays unprobed after a probe round, and its route warns", async () => {
    await probeNow(cp, ids.judged!);
    expect(await health("judged")).toMatchObject({ state: "healthy", tone: "ok", weightFactor: 1 });
    expect(await health("unjudged")).toMatchObject({ state: "unprobed", tone: "unjudged", weightFactor: 0.2 });
    expect(await warnings()).toEqual([
      "no sample applies to unjudged: never probed, unprobed at the probation share; add a sample of its protocol for this route",
    ]);
    // Each protocol's table is its own: the Anthropic line alone carries its clients, unprobed.
    const table = (await (await cp.request("/v1/tables/chat")).json()) as { lines: { name: string; state: string; weight: number }[] };
    expect(table.lines.find((l) => l.name === "unjudged")).toMatchObject({ state: "unprobed", weight: 10_000 });
    // Leaving unprobed is a new version even when no weight moves (judged is its protocol's only line).
    expect(table.lines.find((l) => l.name === "judged")).toMatchObject({ state: "healthy", weight: 10_000 });
  });

  it("the metrics, the CLI and the dashboard show it", async () => {
    const metrics = await (await cp.request("/metrics")).text();
    expect(metrics).toContain('linewatch_line_state{line="unjudged",state="unprobed"} 1');
    expect(metrics).toContain('linewatch_line_state{line="judged",state="unprobed"} 0');
    const cli = await runCli(["health", "unjudged"], { env: { LINEWATCH_URL: cp.url } });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/unprobed/);
    const page = await (await cp.request("/")).text();
    expect(page).toMatch(/data-state="unprobed"/);
    expect(page).toContain("no sample applies to unjudged");
  });
});
