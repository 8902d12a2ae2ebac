import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLine, createRoute, probeNow } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";

// The dashboard's HTML as the server renders it (the browser tests in dashboard/ are the slow suite):
// a line at weight 0 shows its score in its state's colour, never in the colour of a good score.
describe("dashboard: the score of a line out of service", () => {
  let cp: TestControlPlane;
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab({ lines: ["good", "stale"].map((name) => ({ name })) });
    cp = await startTestControlPlane();
    await createRoute(cp, "chat");
    for (const name of ["good", "stale"]) {
      const line = await createLine(cp, { name, baseUrl: lab.baseUrl(name), routes: [{ route: "chat", weight: 100 }] });
      await probeNow(cp, line.id);
    }
    // A cached answer: only the nonce check fails, so its probes still score 80–100 while it cools down.
    lab.setMode("stale", "stale");
    const stale = ((await (await cp.request("/v1/lines")).json()) as { lines: { id: string; name: string }[] }).lines.find(
      (l) => l.name === "stale",
    );
    for (let i = 0; i < 2; i++) await probeNow(cp, stale?.id ?? "");
  });
  afterAll(async () => {
    await cp?.stop();
    await cp?.testDb.dispose();
    await lab?.close();
  });

  const scoreOf = (html: string, name: string) => {
    const row = new RegExp(
      `<tr data-line="[^"]+" data-state="(\\w+)"[^>]*>(?:(?!</tr>).)*?>${name}</a>(?:(?!</tr>).)*?<span class="score ([\\w-]+)"[^>]*>([\\d.–]+)</span>`,
      "s",
    ).exec(html);
    if (!row) throw new Error(`no row for ${name}`);
    return { state: row[1], cls: row[2], score: row[3] };
  };

  it("overview: the line in cooldown shows its high score in the cooldown colour; a healthy one in green", async () => {
    const html = await (await cp.request("/")).text();
    const stale = scoreOf(html, "stale");
    expect(stale.state).toBe("cooldown");
    expect(Number(stale.score)).toBeGreaterThanOrEqual(80);
    expect(stale.cls).toBe("s-down");
    expect(scoreOf(html, "good")).toEqual({ state: "healthy", cls: "s-good", score: expect.stringMatching(/^\d/) });
  });

  it("the line's page: the big score in the cooldown colour", async () => {
    const html = await (await cp.request("/lines/stale")).text();
    expect(html).toMatch(/<h2>Score<\/h2>\s*<div class="big s-down">\d/);
  });

  it("a drained line shows its score in the colour of a line switched off", async () => {
    const good = ((await (await cp.request("/v1/lines")).json()) as { lines: { id: string; name: string }[] }).lines.find(
      (l) => l.name === "good",
    );
    const res = await cp.request(`/v1/lines/${good?.id}`, { method: "PATCH", json: { adminState: "drained" } });
    expect(res.status).toBe(200);
    const html = await (await cp.request("/")).text();
    expect(scoreOf(html, "good")).toMatchObject({ state: "drained", cls: "s-off" });
  });
});
