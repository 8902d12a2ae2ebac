import type { insertLine } from "@linewatch/db";

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
