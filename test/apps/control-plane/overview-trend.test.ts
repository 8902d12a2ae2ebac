import { storeProbeResults } from "@linewatch/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLine, createRoute } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { probeResultRow } from "../../helpers/rows";

// The dashboard's score trend per bucket is core's line score of the bucket's probes (summedLineScore):
// each probe counted by its sample's weight, a weight-0 sample not at all; field completeness is the
// plain mean over every probe.
describe("the overview's score trend", () => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" } });
  });
  afterAll(async () => {
    await cp?.stop();
    await cp?.testDb.dispose();
  });

  const sample = async (name: string, weight: number) => {
    const res = await cp.request("/v1/samples", {
      method: "POST",
      json: { name, protocol: "openai-chat", weight, request: { messages: [{ role: "user", content: "hi" }] }, expect: { minLength: 1 } },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };

  it("weighs each sample's probes by its sample's weight, in the bucket they started in", async () => {
    await createRoute(cp, "chat");
    const line = await createLine(cp, { name: "a", baseUrl: "http://127.0.0.1:9/v1", routes: [{ route: "chat", weight: 10 }] });
    const heavy = await sample("heavy", 3);
    const light = await sample("light", 1);
    const none = await sample("none", 0);
    const at = Date.now() - 1_000;
    const fields = (f: number) => ({ components: { length: 1, fields: f, freshness: 1, status: 1, latency: 1 } });
    await storeProbeResults(
      cp.database.db,
      [
        ...[0, 1, 2].map((i) => probeResultRow(line.id, heavy, at, { score: 100, contentHash: `h${i}`, ...fields(1) })),
        probeResultRow(line.id, light, at, { score: 0, passed: false, ...fields(0) }),
        probeResultRow(line.id, none, at, { score: 0, passed: false, ...fields(0) }),
      ],
      null,
    );
    await cp.engine.registry.changed("all");
    const o = await cp.services.views.overview.load(1);
    const view = o.lines.find((l) => l.id === line.id);
    // (3 × 300 + 1 × 0 + 0 × 0) / (3 × 3 + 1 × 1) = 90; completeness: 3 of 5 probes had every field.
    expect(view?.trend.filter((v) => v !== null)).toEqual([90]);
    expect(view?.fields.filter((v) => v !== null)).toEqual([0.6]);
  });
});
