import { expect } from "vitest";
import type { TestControlPlane } from "./control-plane";

/** Small factories over the real API. */
export async function createRoute(cp: TestControlPlane, name: string, extra: object = {}) {
  const res = await cp.request("/v1/routes", { method: "POST", json: { name, ...extra } });
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

export async function createLine(cp: TestControlPlane, body: Record<string, unknown>): Promise<{ id: string; name: string }> {
  const res = await cp.request("/v1/lines", {
    method: "POST",
    json: { tier: "paid", protocol: "openai-chat", model: "lab-model", ...body },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json() as Promise<{ id: string; name: string }>;
}

export interface ResultView {
  id: string;
  sample: string;
  score: number;
  passed: boolean;
  hardFailure: boolean;
  errorClass: string | null;
  status: number | null;
  components: { length: number; fields: number; freshness: number; status: number; latency: number };
  checks: { name: string; verdict: "pass" | "fail" | "broken"; detail?: string }[];
  reasons: string[];
  contentLength: number;
  tokens: number | null;
  trigger: string;
  startedAt: string;
}

export async function probeNow(cp: TestControlPlane, lineId: string): Promise<ResultView[]> {
  const res = await cp.request(`/v1/lines/${lineId}/probe`, { method: "POST" });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { results: ResultView[] }).results;
}

export const bySample = (results: ResultView[], sample: string): ResultView => {
  const r = results.find((x) => x.sample === sample);
  if (!r) throw new Error(`no result for sample ${sample} in ${results.map((x) => x.sample).join(", ")}`);
  return r;
};

/** Poll `check` until it returns a value (not undefined/false) or the deadline passes. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v as T;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
