// Which events a webhook kind carries, the bodies sent, and the retry schedule (core, pure).
import {
  nextWebhookAttempt,
  type TimelineEvent,
  tableModeChange,
  WEBHOOK_EVENT_KINDS,
  WEBHOOK_FIRST_RETRY_MS,
  WEBHOOK_KIND_RULES,
  WEBHOOK_MAX_RETRY_MS,
  type WebhookMessage,
  webhookBody,
  webhookJsonBody,
  webhookKindsOf,
} from "@linewatch/core";
import { describe, expect, it } from "vitest";

const event = (e: Partial<TimelineEvent>): TimelineEvent => ({
  id: 7,
  at: Date.UTC(2026, 10, 29, 12),
  kind: "state_change",
  lineId: "line-1",
  route: null,
  reason: "failure_evidence: 4 hard failures",
  data: { line: "free-b", from: "healthy", to: "cooldown", probeIds: ["p1"] },
  ...e,
});
const table = (mode: string, previousMode: unknown) =>
  event({
    kind: "table_published",
    lineId: null,
    route: "chat",
    reason: "free-b: failure_evidence",
    data: { version: 4, mode, previousMode },
  });

describe("webhook kinds", () => {
  it("every kind has its rule, and the list is the one the API reads", () => {
    expect(Object.keys(WEBHOOK_KIND_RULES).sort()).toEqual([...WEBHOOK_EVENT_KINDS].sort());
  });

  it.each([
    ["a state change", event({}), ["state_change"]],
    [
      "a fail-safe state change, narrowest first",
      event({ reason: "fail_safe: 1 failing result(s) could not be applied" }),
      ["fail_safe", "state_change"],
    ],
    ["a state change whose detail mentions fail_safe", event({ reason: "admin: fail_safe: no" }), ["state_change"]],
    ["a trend alert", event({ kind: "trend_alert", reason: "score fell 30 points" }), ["trend_alert"]],
    ["live evidence", event({ kind: "live_evidence", reason: "silent failures" }), ["live_evidence"]],
    ["a weight change", event({ kind: "weight_change" }), []],
    ["a fingerprint move", event({ kind: "fingerprint", reason: "fingerprint of sample pick-a-fruit: …" }), ["fingerprint"]],
    ["a usage check failing", event({ kind: "usage", reason: "usage of sample nonce-echo: …" }), ["usage"]],
    ["a shape change", event({ kind: "shape_change", reason: "shape changed" }), ["shape_change"]],
    ["a table publish into degraded", table("degraded", "normal"), ["table_mode"]],
    ["a table publish into panic from degraded", table("panic", "degraded"), ["table_mode"]],
    ["a table publish back to normal", table("normal", "panic"), ["table_mode"]],
    ["a table publish in the same mode", table("degraded", "degraded"), []],
    ["a route's first version (no previous mode)", table("panic", null), []],
    [
      "a publish recorded before previousMode existed",
      event({ kind: "table_published", lineId: null, route: "chat", data: { mode: "panic" } }),
      [],
    ],
    ["a made-up mode", table("weird", "normal"), []],
  ])("%s", (_, e, kinds) => {
    expect(webhookKindsOf(e)).toEqual(kinds);
  });

  it("a mode change reads from and to", () => {
    expect(tableModeChange(table("degraded", "normal"))).toEqual({ from: "normal", to: "degraded" });
  });
});

describe("webhook bodies", () => {
  const message: WebhookMessage = {
    deliveryId: "7-sink",
    kinds: webhookKindsOf(event({})),
    event: event({}),
    line: "free-b",
    routes: ["chat"],
  };

  it("json: the event as the timeline shows it, with the key, kinds, line, routes and a summary", () => {
    expect(JSON.parse(webhookBody("json", message))).toEqual({
      id: "7-sink",
      kinds: ["state_change"],
      summary: "line free-b: healthy → cooldown (failure_evidence: 4 hard failures)",
      line: "free-b",
      routes: ["chat"],
      event: {
        id: 7,
        at: "2026-11-29T12:00:00.000Z",
        kind: "state_change",
        lineId: "line-1",
        route: null,
        reason: "failure_evidence: 4 hard failures",
        data: { line: "free-b", from: "healthy", to: "cooldown", probeIds: ["p1"] },
      },
    });
    expect(webhookBody("json", message)).toBe(JSON.stringify(webhookJsonBody(message)));
  });

  it("slack: one text line, marked by how bad it is, names in backticks", () => {
    const text = (m: WebhookMessage) => (JSON.parse(webhookBody("slack", m)) as { text: string }).text;
    expect(text(message)).toBe(":red_circle: *linewatch* line `free-b`: healthy → cooldown (failure_evidence: 4 hard failures)");
    const back = event({ data: { line: "free-b", from: "probation", to: "healthy" }, reason: "probation_complete: back" });
    expect(text({ ...message, event: back })).toMatch(/^:large_green_circle: \*linewatch\* line `free-b`: probation → healthy/);
    const degraded = table("degraded", "normal");
    expect(text({ ...message, event: degraded, line: null })).toBe(
      ":large_yellow_circle: *linewatch* route `chat`: table mode normal → degraded, version 4 (free-b: failure_evidence)",
    );
    expect(text({ ...message, event: event({ kind: "trend_alert", data: { from: 95, to: 60 }, reason: "fell" }) })).toBe(
      ":chart_with_downwards_trend: *linewatch* line `free-b`: trend alert, score 95 → 60 (fell)",
    );
  });
});

describe("the retry schedule", () => {
  const now = 1_000_000;
  const deadline = now + 3_600_000;

  it("waits 1 s, 2 s, 4 s, … (half to all of it), at most 5 minutes", () => {
    for (const [attempts, full] of [
      [1, 1_000],
      [2, 2_000],
      [5, 16_000],
      [9, 256_000],
      [10, WEBHOOK_MAX_RETRY_MS],
      [60, WEBHOOK_MAX_RETRY_MS],
    ] as const) {
      expect(nextWebhookAttempt(attempts, now, deadline, () => 0)).toEqual({ retry: true, at: now + full / 2 });
      expect(nextWebhookAttempt(attempts, now, deadline, () => 0.999999)).toEqual({ retry: true, at: Math.ceil(now + full * 0.9999995) });
    }
    expect(WEBHOOK_FIRST_RETRY_MS).toBe(1_000);
  });

  it("tries last at the deadline, and gives up on a failure at or after it", () => {
    expect(nextWebhookAttempt(12, deadline - 1_000, deadline, () => 1)).toEqual({ retry: true, at: deadline });
    expect(nextWebhookAttempt(12, deadline, deadline, () => 0)).toEqual({ retry: false });
    expect(nextWebhookAttempt(1, deadline + 1, deadline, () => 0)).toEqual({ retry: false });
  });
});
