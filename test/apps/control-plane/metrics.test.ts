import { spawnSync } from "node:child_process";
import { HEALTH_STATES } from "@linewatch/core";
import { type Lab, startLab } from "@linewatch/lab";
import { Gauge, Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMetrics } from "../../../apps/control-plane/src/metrics";
import { createLine, createRoute, eventually, probeNow } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { ManualClock } from "../../helpers/manual-clock";
import { type Family, parseExposition } from "./exposition";

// GET /metrics: checked by promtool (Debian's `prometheus` package; .ci/run installs it) and by a
// strict parser of the text format (exposition.ts), which also lets the tests read the values.

const promtool = spawnSync("promtool", ["--version"], { encoding: "utf8" }).status === 0;

/** promtool's verdict on an exposition: exit status 0 and nothing to say, or its complaints. */
function promtoolCheck(text: string): { status: number | null; output: string } {
  const r = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

const values = (f: Map<string, Family>, family: string, sampleName = family) =>
  f.get(family)?.samples.filter((s) => s.name === sampleName) ?? [];
const sampleValue = (f: Map<string, Family>, family: string, labels: Record<string, string>, sampleName = family) =>
  values(f, family, sampleName).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

/** Label names the control plane's own series may carry: bounded sets and names from the registry. */
const OWN_LABELS = new Set(["line", "sample", "route", "state", "outcome", "mode", "tier", "protocol", "le", "webhook"]);
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const HASH = /^[0-9a-f]{16,}$/i;

let cp: TestControlPlane;
let lab: Lab;
const ids: Record<string, string> = {};

async function scrape(target: TestControlPlane = cp): Promise<{ text: string; families: Map<string, Family> }> {
  const res = await target.request("/metrics");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  if (promtool) {
    const verdict = promtoolCheck(text);
    expect(verdict.output, "promtool check metrics").toBe("");
    expect(verdict.status).toBe(0);
  }
  return { text, families: parseExposition(text) };
}

beforeAll(async () => {
  lab = await startLab({ lines: ["good", "bad"].map((name) => ({ name, baseLatencyMs: 5 })) });
  cp = await startTestControlPlane();
  await createRoute(cp, "chat");
  ids.good = (
    await createLine(cp, { name: "good", tier: "paid", baseUrl: lab.baseUrl("good"), routes: [{ route: "chat", weight: 100 }] })
  ).id;
  ids.bad = (await createLine(cp, { name: "bad", tier: "paid", baseUrl: lab.baseUrl("bad"), routes: [{ route: "chat", weight: 100 }] })).id;
  // A webhook sink (its receiver not there): its series are in every scrape below, promtool's checks included.
  const hook = await cp.request("/v1/webhooks", {
    method: "POST",
    json: { name: "oncall", url: "http://127.0.0.1:9/hook", secret: "whsec-metrics-0123456789" },
  });
  expect(hook.status).toBe(201);
  for (let i = 0; i < 3; i++) {
    await probeNow(cp, ids.good!);
    await probeNow(cp, ids.bad!);
  }
}, 120_000);

afterAll(async () => {
  await cp?.stop();
  await lab?.close();
});

describe("the strict parser", () => {
  it("rejects what the format forbids", () => {
    const ok = "# HELP a_total x\n# TYPE a_total counter\na_total 1\n";
    expect(parseExposition(ok).get("a_total")?.samples[0]?.value).toBe(1);
    const bad = [
      "# TYPE a_total counter\na_total 1\n", // no HELP
      "# HELP a x\n# TYPE a counter\na 1\n", // counter without _total
      '# HELP a x\n# TYPE a gauge\na{l="1"} 1\na{l="1"} 2\n', // duplicate series
      '# HELP a x\n# TYPE a gauge\na{l="1} 1\n', // unterminated label value
      "# HELP a x\n# TYPE a gauge\na 1\n# HELP b x\n# TYPE b gauge\nb 1\na 2\n", // family not grouped
      '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', // not cumulative
      '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', // no +Inf
      "# HELP a x\n# TYPE a gauge\na one\n", // bad value
      "# HELP a x\n# TYPE a gauge\na 1", // no final newline
    ];
    for (const text of bad) expect(() => parseExposition(text), text).toThrow();
  });
});

describe("GET /metrics", () => {
  it("passes promtool check metrics (or the strict parser when promtool is not installed)", async () => {
    if (process.env.CI && !promtool) throw new Error("promtool missing in CI: .ci/run installs the prometheus package");
    const { families } = await scrape();
    for (const name of families.keys()) expect(name).toMatch(/^linewatch_/);
  });

  it("counts probes per line, sample and outcome, with a duration histogram that agrees", async () => {
    const { families } = await scrape();
    const samples = ["json-fields", "long-explainer", "nonce-echo", "travel-minutes"];
    for (const sample of samples) {
      const passes = sampleValue(families, "linewatch_probes_total", { line: "good", sample, outcome: "pass" }) ?? 0;
      const fails = sampleValue(families, "linewatch_probes_total", { line: "good", sample, outcome: "fail" }) ?? 0;
      expect(passes + fails, sample).toBe(3);
      expect(
        sampleValue(families, "linewatch_probe_duration_seconds", { line: "good", sample }, "linewatch_probe_duration_seconds_count"),
      ).toBe(3);
    }
    expect(
      sampleValue(
        families,
        "linewatch_probe_content_length_characters",
        { line: "good" },
        "linewatch_probe_content_length_characters_count",
      ),
    ).toBe(12);
    // Empty answers land in the le="0" bucket; a healthy line gives none.
    expect(
      sampleValue(
        families,
        "linewatch_probe_content_length_characters",
        { line: "good", le: "0" },
        "linewatch_probe_content_length_characters_bucket",
      ),
    ).toBe(0);
    const fieldsSum = sampleValue(
      families,
      "linewatch_probe_field_completeness_ratio",
      { line: "good" },
      "linewatch_probe_field_completeness_ratio_sum",
    )!;
    expect(fieldsSum / 12).toBeGreaterThan(0.9);
    expect(sampleValue(families, "linewatch_probe_tokens_total", { line: "good" })).toBeGreaterThan(0);
    expect(sampleValue(families, "linewatch_probes_in_flight", {})).toBe(0);
    // Probes asked for by hand have no due time, so no lateness.
    expect(sampleValue(families, "linewatch_probe_lateness_seconds", {}, "linewatch_probe_lateness_seconds_count")).toBe(0);
  });

  it("observes how late each claimed probe started after its due time", async () => {
    const clock = new ManualClock();
    const behind = await startTestControlPlane({ clock });
    try {
      await createRoute(behind, "chat");
      // Its 4 slots fall within the first 40 s (its interval): a random start, then every 10 s, wrapped.
      await createLine(behind, {
        name: "good",
        baseUrl: lab.baseUrl("good"),
        routes: [{ route: "chat", weight: 1 }],
        probeIntervalSec: 40,
      });
      clock.advance(100_000); // a control plane that could not send for 100 s
      await behind.engine.tick();
      await behind.engine.prober.drain();
      const { families } = await scrape(behind);
      const metric = "linewatch_probe_lateness_seconds";
      expect(sampleValue(families, metric, {}, `${metric}_count`)).toBe(4);
      const sum = sampleValue(families, metric, {}, `${metric}_sum`)!;
      expect(sum).toBeGreaterThan(4 * 60);
      expect(sum).toBeLessThanOrEqual(4 * 100);
      expect(sampleValue(families, metric, { le: "60" }, `${metric}_bucket`)).toBe(0);
      expect(sampleValue(families, metric, { le: "120" }, `${metric}_bucket`)).toBe(4);
    } finally {
      await behind.stop();
      await behind.testDb.dispose();
    }
  });

  it("reports line state, score, weight factor and the published table as the API does", async () => {
    const { families } = await scrape();
    const table = (await (await cp.request("/v1/tables/chat")).json()) as {
      version: number;
      mode: string;
      lines: { name: string; weight: number }[];
    };
    const health = (await (await cp.request(`/v1/lines/${ids.good}/health`)).json()) as {
      state: string;
      score: number;
      weightFactor: number;
    };
    expect(sampleValue(families, "linewatch_line_state", { line: "good", state: health.state })).toBe(1);
    expect(values(families, "linewatch_line_state").filter((s) => s.labels.line === "good" && s.value === 1)).toHaveLength(1);
    expect(values(families, "linewatch_line_state").filter((s) => s.labels.line === "good")).toHaveLength(HEALTH_STATES.length);
    expect(sampleValue(families, "linewatch_line_score", { line: "good" })).toBeCloseTo(health.score, 6);
    expect(sampleValue(families, "linewatch_line_weight_factor_ratio", { line: "good" })).toBe(health.weightFactor);
    expect(sampleValue(families, "linewatch_line_info", { line: "good", tier: "paid", protocol: "openai-chat" })).toBe(1);
    expect(sampleValue(families, "linewatch_table_version", { route: "chat" })).toBe(table.version);
    expect(sampleValue(families, "linewatch_table_mode", { route: "chat", mode: table.mode })).toBe(1);
    for (const l of table.lines) expect(sampleValue(families, "linewatch_line_weight", { route: "chat", line: l.name })).toBe(l.weight);
    const publishedAt = sampleValue(families, "linewatch_table_published_timestamp_seconds", { route: "chat" })!;
    expect(Math.abs(publishedAt - Date.now() / 1000)).toBeLessThan(600);
    expect(sampleValue(families, "linewatch_database_up", {})).toBe(1);
  });

  it("includes the process metrics in the same registry", async () => {
    const { families } = await scrape();
    expect(families.get("linewatch_process_cpu_seconds_total")?.type).toBe("counter");
    expect(families.get("linewatch_process_resident_memory_bytes")?.type).toBe("gauge");
    expect(families.has("linewatch_nodejs_eventloop_lag_seconds")).toBe(true);
  });

  it("keeps labels bounded: names and small sets, never ids or hashes", async () => {
    const { families } = await scrape();
    for (const f of families.values()) {
      if (/^linewatch_(process|nodejs)_/.test(f.name)) continue;
      for (const s of f.samples) {
        for (const [k, v] of Object.entries(s.labels)) {
          expect(OWN_LABELS.has(k), `${f.name} label ${k}`).toBe(true);
          expect(UUID.test(v) || HASH.test(v), `${f.name}{${k}="${v}"}`).toBe(false);
        }
        if (s.labels.outcome && f.name.startsWith("linewatch_webhook_"))
          expect(["delivered", "failed", "dead_letter"]).toContain(s.labels.outcome);
        else if (s.labels.outcome)
          expect(["pass", "fail", "timeout", "connect", "http_status", "parse", "protocol"]).toContain(s.labels.outcome);
        if (s.labels.mode) expect(["normal", "degraded", "panic"]).toContain(s.labels.mode);
      }
    }
  });

  it("follows a line going bad: hard-failure outcomes, a trend alert, cooldown and weight 0", async () => {
    lab.setMode("bad", "errors", { status: 502 });
    for (let i = 0; i < 3; i++) await probeNow(cp, ids.bad!);
    const { families } = await scrape();
    const health = (await (await cp.request(`/v1/lines/${ids.bad}/health`)).json()) as { state: string; score: number };
    expect(health.state).toBe("cooldown");
    expect(sampleValue(families, "linewatch_line_state", { line: "bad", state: "cooldown" })).toBe(1);
    expect(sampleValue(families, "linewatch_line_state", { line: "bad", state: "healthy" })).toBe(0);
    expect(sampleValue(families, "linewatch_line_weight", { route: "chat", line: "bad" })).toBe(0);
    expect(sampleValue(families, "linewatch_line_weight", { route: "chat", line: "good" })).toBe(10_000);
    expect(sampleValue(families, "linewatch_probes_total", { line: "bad", sample: "nonce-echo", outcome: "http_status" })).toBe(3);
    expect(sampleValue(families, "linewatch_line_weight_factor_ratio", { line: "bad" })).toBe(0);
    // The score fell from ~100 by far more than 20 points within minutes: one trend alert, as the timeline has it.
    const events = (await (await cp.request("/v1/events?kind=trend_alert")).json()) as { events: { lineId: string }[] };
    const alerts = events.events.filter((e) => e.lineId === ids.bad).length;
    expect(alerts).toBeGreaterThan(0);
    expect(sampleValue(families, "linewatch_trend_alerts_total", { line: "bad" })).toBe(alerts);
    expect(sampleValue(families, "linewatch_trend_alerts_total", { line: "good" })).toBe(0);
  });

  it("shows a drain at once, and drops every series of a deleted line", async () => {
    let res = await cp.request(`/v1/lines/${ids.good}`, { method: "PATCH", json: { adminState: "drained" } });
    expect(res.status).toBe(200);
    let { families } = await scrape();
    expect(sampleValue(families, "linewatch_line_state", { line: "good", state: "drained" })).toBe(1);
    expect(sampleValue(families, "linewatch_line_weight_factor_ratio", { line: "good" })).toBe(0);

    res = await cp.request(`/v1/lines/${ids.bad}`, { method: "DELETE" });
    expect(res.status).toBe(204);
    ({ families } = await scrape());
    const left = [...families.values()].flatMap((f) => f.samples.filter((s) => s.labels.line === "bad").map((s) => s.name));
    expect(left).toEqual([]);
    expect(sampleValue(families, "linewatch_probes_total", { line: "good", sample: "nonce-echo", outcome: "pass" })).toBeGreaterThan(0);
  });

  it.skipIf(!process.env.DATABASE_URL)("reports the same state from another replica on the same database", async () => {
    const replica = await startTestControlPlane({ testDb: cp.testDb });
    try {
      await eventually(async () => {
        const [a, b] = [(await scrape(cp)).families, (await scrape(replica)).families];
        for (const family of [
          "linewatch_line_state",
          "linewatch_line_score",
          "linewatch_line_weight",
          "linewatch_table_version",
          "linewatch_trend_alerts_total",
        ]) {
          const norm = (f: Map<string, Family>) =>
            JSON.stringify(
              values(f, family)
                .map((s) => [s.labels, s.value])
                .sort(),
            );
          if (norm(a) !== norm(b)) return false;
        }
        // Probe counts are this replica's own: the replica has run none.
        return values(b, "linewatch_probes_total").length === 0;
      });
    } finally {
      await replica.stop();
    }
  });

  it("counts webhook deliveries by sink and outcome (every outcome from the sink's creation) and the queues", async () => {
    await cp.engine.webhooks.runOnce();
    const { families } = await scrape();
    expect(families.get("linewatch_webhook_deliveries_total")?.type).toBe("counter");
    for (const outcome of ["delivered", "failed", "dead_letter"])
      expect(sampleValue(families, "linewatch_webhook_deliveries_total", { webhook: "oncall", outcome }), outcome).toBeGreaterThanOrEqual(
        0,
      );
    // The receiver is not there: the attempts for the bad line's state changes above failed, and their events wait.
    expect(sampleValue(families, "linewatch_webhook_deliveries_total", { webhook: "oncall", outcome: "failed" })).toBeGreaterThan(0);
    expect(sampleValue(families, "linewatch_webhook_queue_depth", { webhook: "oncall" })).toBeGreaterThan(0);
    expect(sampleValue(families, "linewatch_webhook_oldest_undelivered_age_seconds", { webhook: "oncall" })).toBeGreaterThanOrEqual(0);
    expect(sampleValue(families, "linewatch_webhook_outbox_events", {})).toBe(0);
  });
});

describe("createMetrics", () => {
  it("spells NaN as the format does (prom-client 15.1.3 writes Nan: patches/prom-client+15.1.3.patch)", async () => {
    // The event-loop lag's stddev is NaN when two scrapes come within its 10 ms resolution.
    const metrics = createMetrics(
      new Registry(),
      { state: () => Promise.reject(new Error("down")), inFlight: () => 0, now: () => 0 },
      { processMetrics: false },
    );
    new Gauge({ name: "linewatch_test_not_a_number", help: "NaN on purpose.", registers: [metrics.registry] }).set(Number.NaN);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^linewatch_test_not_a_number NaN$/m);
    expect(sampleValue(parseExposition(text), "linewatch_test_not_a_number", {})).toBeNaN();
  });

  it("still answers, with linewatch_database_up 0, when the database cannot be read", async () => {
    const metrics = createMetrics(
      new Registry(),
      { state: () => Promise.reject(new Error("down")), inFlight: () => 2, now: () => 0 },
      { processMetrics: false },
    );
    const families = parseExposition(await metrics.registry.metrics());
    expect(sampleValue(families, "linewatch_database_up", {})).toBe(0);
    expect(sampleValue(families, "linewatch_probes_in_flight", {})).toBe(2);
    expect(values(families, "linewatch_line_state")).toEqual([]);
    if (promtool) expect(promtoolCheck(await metrics.registry.metrics()).status).toBe(0);
  });
});
