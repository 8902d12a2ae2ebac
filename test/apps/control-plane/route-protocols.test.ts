// A route whose lines speak several protocols (docs/tables.md): one table per protocol, so the free-share
// cap and the panic rules hold for what each protocol's clients get; the API, the dashboard and the
// samples schema say so.
import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLine, createRoute, probeNow } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";

let cp: TestControlPlane;
let lab: Lab;

interface TableView {
  mode: string;
  lines: { name: string; weight: number; protocol: string; tier: string }[];
}

beforeAll(async () => {
  lab = await startLab({ lines: ["chat-paid", "chat-free", "claude-free", "claude-free-2"].map((name) => ({ name })) });
  cp = await startTestControlPlane();
  await createRoute(cp, "mixed", { freeShareCap: 0.2 });
  const lines = [
    { name: "chat-paid", tier: "paid", protocol: "openai-chat" },
    { name: "chat-free", tier: "free", protocol: "openai-chat" },
    { name: "claude-free", tier: "free", protocol: "anthropic-messages" },
    { name: "claude-free-2", tier: "free", protocol: "anthropic-messages" },
  ];
  for (const l of lines) {
    const created = await createLine(cp, { ...l, baseUrl: lab.baseUrl(l.name), routes: [{ route: "mixed", weight: 100 }] });
    await probeNow(cp, created.id);
  }
});

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

describe("a route with openai-chat and anthropic-messages lines", () => {
  it("publishes one table per protocol: each protocol's weights sum to 10000, the free cap held in each, the mode the worst", async () => {
    const t = (await (await cp.request("/v1/tables/mixed")).json()) as TableView;
    const sum = (protocol: string) => t.lines.filter((l) => l.protocol === protocol).reduce((a, l) => a + l.weight, 0);
    expect(sum("openai-chat")).toBe(10000);
    expect(sum("anthropic-messages")).toBe(10000);
    expect(Object.fromEntries(t.lines.map((l) => [l.name, l.weight]))).toEqual({
      "chat-paid": 8000,
      "chat-free": 2000,
      "claude-free": 5000,
      "claude-free-2": 5000,
    });
    // The Anthropic clients have only free lines: their table runs degraded, and so does the route's.
    expect(t.mode).toBe("degraded");
  });

  it("warns that the route's anthropic-messages lines are all free", async () => {
    const route = (await (await cp.request("/v1/routes/mixed")).json()) as { warnings: string[]; lines: Record<string, unknown>[] };
    expect(route.warnings).toEqual([expect.stringContaining("all anthropic-messages lines of this route are free")]);
    expect(route.lines[0]).not.toHaveProperty("protocol");
  });

  it("the dashboard shows each line's protocol, and the route's share bar adds up to 100%", async () => {
    const html = await (await cp.request("/")).text();
    expect(html).toMatch(/claude-free<\/a>\s*<small class="muted">\s*lab-model · anthropic-messages/);
    const widths = [...html.matchAll(/class="seg tier-\w+" style="width:\s*([\d.]+)%"/g)].map((m) => Number(m[1]));
    expect(widths).toHaveLength(4);
    expect(widths.reduce((a, w) => a + w, 0)).toBeCloseTo(100, 5);
  });

  it("a Responses sample needs `input`: a 400 naming request.input", async () => {
    const res = await cp.request("/v1/samples", {
      method: "POST",
      json: { name: "r-bad", protocol: "openai-responses", request: { messages: [{ role: "user", content: "hi" }] }, expect: {} },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; details: { path: string }[] } };
    expect(body.error.code).toBe("invalid_request");
    expect(JSON.stringify(body.error.details)).toContain("request.input");
  });
});
