import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLine, createRoute, probeNow } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";

// A sample whose check cannot be evaluated is the sample's fault, not the line's (docs/scoring.md): its
// results say `broken`, GET /v1/samples/:id says so, and the line stays healthy.
let cp: TestControlPlane;
let lab: Lab;
let lineId: string;
let sampleId: string;

beforeAll(async () => {
  lab = await startLab({ lines: [{ name: "paid-a", baseLatencyMs: 5 }] });
  cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" } });
  await createRoute(cp, "json");
  const res = await cp.request("/v1/samples", {
    method: "POST",
    json: {
      name: "city-json-answer",
      protocol: "openai-chat",
      routes: ["json"],
      // The answer is a JSON object: an expected text answer cannot be compared with it.
      request: {
        messages: [{ role: "user", content: "Facts about Paris as a JSON object with keys city and country." }],
        response_format: { type: "json_object" },
      },
      expect: { answer: "Paris" },
    },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  sampleId = ((await res.json()) as { id: string }).id;
  lineId = (await createLine(cp, { name: "paid-a", baseUrl: lab.baseUrl("paid-a"), routes: [{ route: "json", weight: 100 }] })).id;
}, 60_000);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

describe("a broken sample", () => {
  it("is reported in its results and in GET /v1/samples/:id, and never counted against the line", async () => {
    for (let i = 0; i < 3; i++) {
      const [r] = await probeNow(cp, lineId);
      expect(r?.checks).toContainEqual(expect.objectContaining({ name: "answer", verdict: "broken" }));
      expect(r?.passed).toBe(true);
    }
    const sample = (await (await cp.request(`/v1/samples/${sampleId}`)).json()) as {
      broken: { check: string; detail: string; lines: number; lastSeenAt: string }[];
    };
    expect(sample.broken).toEqual([{ check: "answer", detail: expect.stringMatching(/JSON/), lines: 1, lastSeenAt: expect.any(String) }]);
    const health = (await (await cp.request(`/v1/lines/${lineId}/health`)).json()) as { state: string; weightFactor: number };
    expect(health).toMatchObject({ state: "healthy", weightFactor: 1 });
  });

  it("a sample that is not broken says so with an empty list", async () => {
    const other = await cp.request("/v1/samples", {
      method: "POST",
      json: { name: "plain", protocol: "openai-chat", request: { messages: [{ role: "user", content: "hi" }] }, expect: { minLength: 1 } },
    });
    const { id } = (await other.json()) as { id: string };
    const sample = (await (await cp.request(`/v1/samples/${id}`)).json()) as { broken: unknown[] };
    expect(sample.broken).toEqual([]);
  });
});
