// What a relay can fake, end to end in real time (issue 25): the scheduler probes lab lines every
// second with three fingerprint samples (one phrasing each, so anchors fill in 20 s) and a golden one;
// once anchored, one free line is substituted and another starts billing 1.2× its tokens. The
// substituted line goes to a factor ≤ 0.5 and a fingerprint event names its moved samples; the
// inflating line fails `usage` within 2 probes of a sample; the honest paid lines stay at full weight.
// Bounded: at most 60 s of anchoring and 60 s of detection. On PGlite, or PostgreSQL with DATABASE_URL.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LineHealth } from "@linewatch/contract";
import { FINGERPRINT_BANK, type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { createLine, createRoute, eventually } from "../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../helpers/control-plane";

const PROMPTS = ["fp-animal", "fp-number-10", "fp-pick-fruit"];
const LINES = [
  { name: "paid-a", tier: "paid" },
  { name: "paid-b", tier: "paid" },
  { name: "free-sub", tier: "free" },
  { name: "free-usage", tier: "free" },
] as const;

let cp: TestControlPlane;
let lab: Lab;
let dir: string;
const ids: Record<string, string> = {};

const health = async (name: string) => (await (await cp.request(`/v1/lines/${ids[name]}/health`)).json()) as LineHealth;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "lw-relay-e2e-"));
  for (const id of PROMPTS) {
    const p = FINGERPRINT_BANK.find((x) => x.id === id);
    if (!p) throw new Error(id);
    writeFileSync(
      join(dir, `${id}.yaml`),
      stringify({
        name: id,
        protocol: "openai-chat",
        request: { messages: [{ role: "user", content: p.phrasings[0] }], max_tokens: p.maxTokens, temperature: 0 },
        expect: { fingerprint: { form: p.form, ...(p.options ? { options: [...p.options] } : {}) } },
      }),
    );
  }
  writeFileSync(
    join(dir, "travel-minutes.yaml"),
    stringify({
      name: "travel-minutes",
      protocol: "openai-chat",
      request: {
        messages: [
          {
            role: "user",
            content:
              "A train leaves at 14:35 and arrives at 17:10 the same day. How many minutes does the journey take? Answer with the number only.",
          },
        ],
        max_tokens: 20,
        temperature: 0,
      },
      expect: { answer: "155", maxLength: 40 },
    }),
  );
  lab = await startLab({ lines: LINES.map((l) => ({ name: l.name })) });
  cp = await startTestControlPlane({
    env: {
      LINEWATCH_SCHEDULER: "true",
      LINEWATCH_PROBES_DIR: dir,
      LINEWATCH_SHIPPED_FINGERPRINTS: "true",
      LINEWATCH_BATCH_LINGER_MS: "20",
    },
  });
  await createRoute(cp, "chat");
  for (const l of LINES)
    ids[l.name] = (
      await createLine(cp, {
        name: l.name,
        tier: l.tier,
        baseUrl: lab.baseUrl(l.name),
        probeIntervalSec: 1,
        routes: [{ route: "chat", weight: 100 }],
      })
    ).id;
}, 60_000);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("what a relay can fake, in real time", () => {
  it("anchors, then catches a substitution (factor ≤ 0.5, an event naming the moved samples) and inflated usage (within 2 probes); honest lines stay", async () => {
    // Anchored: every line's fingerprint samples have 20 answers and its usage anchors 8.
    await eventually(
      async () => {
        for (const l of LINES) {
          const h = await health(l.name);
          if (h.relay.fingerprints.length !== PROMPTS.length) return false;
          if (h.relay.fingerprints.some((f) => (f.variants[0]?.answers ?? 0) < 21)) return false;
        }
        return true;
      },
      60_000,
      500,
    );
    const switchedAt = new Date().toISOString();
    lab.setMode("free-sub", "substitute", { share: 1, differOn: 1 });
    lab.setMode("free-usage", "inflate-usage", { factor: 1.2 });

    // Inflated usage: every sample's first or second probe after the switch fails `usage`.
    const results = async (name: string) =>
      ((await (await cp.request(`/v1/lines/${ids[name]}/health`)).json()) as LineHealth).recent.filter((r) => r.startedAt > switchedAt);
    const usageResults = await eventually(
      async () => {
        const rs = await results("free-usage");
        const bySample = new Map<string, typeof rs>();
        for (const r of [...rs].reverse()) bySample.set(r.sample, [...(bySample.get(r.sample) ?? []), r]);
        return bySample.size === PROMPTS.length + 1 && [...bySample.values()].every((x) => x.length >= 2) ? bySample : false;
      },
      20_000,
      200,
    );
    for (const [sample, rs] of usageResults) {
      const firstTwo = rs.slice(0, 2);
      expect(
        firstTwo.some((r) => r.checks.some((c) => c.name === "usage" && c.verdict === "fail")),
        `${sample}: ${JSON.stringify(firstTwo.map((r) => r.checks))}`,
      ).toBe(true);
    }

    // Substitution: the line's weight goes to ≤ 0.5, and an event names the samples that moved.
    await eventually(async () => (await health("free-sub")).weightFactor <= 0.5, 60_000, 250);
    const events = (
      (await (await cp.request(`/v1/events?line=free-sub&kind=fingerprint`)).json()) as {
        events: { reason: string; data: { sampleId: string; moved: boolean; anchor: unknown[]; now: unknown[] } }[];
      }
    ).events.filter((e) => e.data.moved);
    expect(events.length).toBeGreaterThan(0);
    const sub = await health("free-sub");
    const moved = new Set(sub.relay.fingerprints.filter((f) => f.failing.length > 0).map((f) => f.sampleId));
    expect(events.some((e) => moved.has(e.data.sampleId))).toBe(true);
    for (const e of events) {
      expect(e.reason).toMatch(/^fingerprint of sample /);
      expect(e.data.anchor.length).toBeGreaterThan(0);
      expect(e.data.now.length).toBeGreaterThan(0);
    }

    // Honest lines stay: full weight, no fingerprint or usage failure.
    for (const name of ["paid-a", "paid-b"]) {
      const h = await health(name);
      expect(h.weightFactor, name).toBe(1);
      expect(
        h.relay.fingerprints.every((f) => f.failing.length === 0),
        name,
      ).toBe(true);
      expect(
        h.relay.usage.every((u) => u.failing === null),
        name,
      ).toBe(true);
    }
  }, 150_000);
});
