import type { insertLine, ProbeResultInsert } from "@linewatch/db";

type LineInsert = Parameters<typeof insertLine>[1];

/** A line row as `insertLine` takes it, on route `chat`, for tests that write the database directly. */
export const lineRow = (name: string, overrides: Partial<LineInsert> = {}): LineInsert => ({
  name,
  tier: "paid",
  protocol: "openai-chat",
  baseUrl: "http://127.0.0.1:9/v1",
  model: "m",
  apiKeyEnc: null,
  headers: {},
  routes: [{ route: "chat", weight: 10 }],
  probeIntervalSec: 45,
  timeoutMs: null,
  dailyQuota: null,
  probeBudgetPct: 5,
  maxShare: null,
  adminState: "active",
  ...overrides,
});

/** A passing probe result as `storeProbeResults` takes it, started at `at` (ms). */
export const probeResultRow = (
  lineId: string,
  sampleId: string,
  at: number,
  overrides: Partial<ProbeResultInsert> = {},
): ProbeResultInsert => ({
  lineId,
  sampleId,
  startedAt: new Date(at),
  latencyMs: 100,
  status: 200,
  errorClass: null,
  hardFailure: false,
  passed: true,
  score: 95.5,
  components: { length: 1, fields: 1, freshness: 1, status: 1, latency: 0.9 },
  checks: [],
  contentLength: 200,
  contentHash: `h-${at}`,
  excerpt: "fine",
  reasons: [],
  tokens: 42,
  slot: null,
  trigger: "schedule",
  ...overrides,
});
