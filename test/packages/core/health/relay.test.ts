// What a relay can fake, in the health machine: fingerprint, usage and shape steps carried by probe
// results, what they learn and when, the events they raise, and a restart that keeps them.
import { describe, expect, it } from "vitest";
import {
  describeHealth,
  type FingerprintStep,
  type Health,
  type HealthEffect,
  type HealthEvent,
  initialHealth,
  parseHealth,
  SHAPE_CHANGE_RUN,
  SHAPE_WARMUP,
  shapeChangedRecently,
  shapeSignature,
  transition,
  type UsageStep,
} from "../../../../packages/core/src/index";
import { MIN, policy } from "./helpers";

const T0 = 1_700_000_000_000;
const H = 17.46;
const LLR_MISS = Math.log(0.35 / 0.05);
const LLR_HIT = Math.log(0.65 / 0.95);
const OPENAI = shapeSignature({ id: "chatcmpl-abcdefghijklmnopqrstuvwxyz012", fields: ["choices", "id", "model", "usage"] });
const OTHER = shapeSignature({ id: "chatcmpl-0f8fad5b-d9cb-469f-a165-70867728950e", fields: ["choices", "id", "model"] });

let seq = 0;
interface ProbeOpts {
  sample?: string;
  passed?: boolean;
  fingerprint?: FingerprintStep;
  usage?: UsageStep;
  shape?: string;
  contentLength?: number;
}
function probe(o: ProbeOpts): HealthEvent {
  const passed = o.passed ?? true;
  return {
    type: "probe",
    result: {
      id: `p${++seq}`,
      sampleId: o.sample ?? "fp-number-10",
      score: passed ? 97 : 40,
      passed,
      hardFailure: false,
      startedAt: 0,
      ...(o.contentLength !== undefined ? { contentLength: o.contentLength } : {}),
      ...(o.fingerprint ? { fingerprint: o.fingerprint } : {}),
      ...(o.usage ? { usage: o.usage } : {}),
      ...(o.shape ? { shape: o.shape } : {}),
    },
    lineScore: 95,
  };
}
const answer = (a: string, own: number | null = null, peers: number | null = null): FingerprintStep => ({
  variant: "v1",
  answer: a,
  own,
  peers,
  threshold: H,
});

function run(h: Health, events: HealthEvent[], start = T0, every = 45_000) {
  const effects: Array<HealthEffect & { at: number }> = [];
  let now = start;
  for (const e of events) {
    const t = transition(h, e, policy, now);
    h = t.health;
    for (const x of t.effects) effects.push({ ...x, at: now });
    now += every;
  }
  return { h, effects, now };
}

/** A line that anchored "7" on its fingerprint sample: 200 answers while healthy. */
function anchored(): Health {
  return run(
    initialHealth(T0),
    Array.from({ length: 200 }, () => probe({ fingerprint: answer("7") })),
  ).h;
}

describe("fingerprints in health", () => {
  it("anchors learn only while the line is healthy at full weight, from passing probes, while the statistics stand at 0", () => {
    const h = anchored();
    expect(h.fingerprints["fp-number-10"]?.variants.v1?.anchor).toEqual({ shares: { "7": 1 }, n: 200 });
    // A miss that moves the statistic is learned (it stood at 0 before it); the next is not.
    const after = run(h, [probe({ fingerprint: answer("3", LLR_MISS) }), probe({ fingerprint: answer("3", LLR_MISS) })]).h;
    const t = after.fingerprints["fp-number-10"];
    expect(t?.variants.v1?.anchor.n).toBe(201);
    expect(t?.own).toBeCloseTo(2 * LLR_MISS, 9);
    expect(t?.variants.v1?.recent.slice(-2)).toEqual(["3", "3"]);
    // A failed probe teaches nothing, whatever the statistic.
    const failed = run(h, [probe({ passed: false, fingerprint: answer("9") })]).h;
    expect(failed.fingerprints["fp-number-10"]?.variants.v1?.anchor.n).toBe(200);
  });

  it("a line in cooldown keeps stepping its statistics but learns nothing", () => {
    let h = anchored();
    h = run(h, [probe({ passed: false, sample: "json" }), probe({ passed: false, sample: "json" })], T0 + 200 * 45_000).h;
    expect(h.phase.state).toBe("cooldown");
    const after = run(h, [probe({ fingerprint: answer("7", LLR_HIT) })], T0 + 202 * 45_000).h;
    expect(after.fingerprints["fp-number-10"]?.variants.v1?.anchor.n).toBe(200);
    expect(after.fingerprints["fp-number-10"]?.variants.v1?.recent.at(-1)).toBe("7");
  });

  it("crossing the threshold is a `fingerprint` event naming the anchor and the latest answers; falling back is another", () => {
    const h = anchored();
    const misses = Array.from({ length: 9 }, (_, i) =>
      probe({
        // The scorer fails the answer that takes the statistic over its threshold (the 9th), and says what moved.
        passed: i < 8,
        fingerprint: {
          ...answer("3", LLR_MISS),
          ...(i === 8
            ? {
                moved: [
                  {
                    reference: "own" as const,
                    detail: "moved away",
                    anchor: [{ answer: "7", share: 1 }],
                    now: [{ answer: "3", count: 8 }],
                  },
                ],
              }
            : {}),
        },
      }),
    );
    const { h: moved, effects } = run(h, misses);
    const fp = effects.filter((e) => e.kind === "fingerprint");
    expect(fp).toHaveLength(1);
    expect(fp[0]).toMatchObject({
      kind: "fingerprint",
      sampleId: "fp-number-10",
      moved: true,
      references: ["own"],
      anchor: [{ answer: "7", share: 1 }],
      now: [{ answer: "3", count: 8 }],
    });
    expect(fp[0]?.kind === "fingerprint" && fp[0].detail).toContain("fingerprint of sample fp-number-10: moved away");
    const back = run(
      moved,
      Array.from({ length: 10 }, () => probe({ fingerprint: answer("7", LLR_HIT) })),
    ).effects.filter((e) => e.kind === "fingerprint");
    expect(back).toHaveLength(1);
    expect(back[0]).toMatchObject({ moved: false, references: [] });
  });

  it("a fingerprint failure counts as a content failure of its sample: two in a row cool the line down, the cause says which fingerprint moved", () => {
    let h = anchored();
    h = run(
      h,
      Array.from({ length: 9 }, () => probe({ passed: true, fingerprint: answer("3", LLR_MISS) })),
    ).h;
    const { h: out, effects } = run(h, [
      probe({ passed: false, fingerprint: answer("3", LLR_MISS) }),
      probe({ passed: false, fingerprint: answer("3", LLR_MISS) }),
    ]);
    expect(out.phase.state).toBe("cooldown");
    const cooldown = effects.find((e) => e.kind === "state_change" && e.to === "cooldown");
    expect(cooldown?.kind === "state_change" && cooldown.detail).toMatch(/fingerprints moved: fp-number-10 \(own\)/);
  });

  it("ordinary nondeterminism (passing answers outside the anchor) leaves the evidence and the factor alone", () => {
    const h = anchored();
    const { h: out } = run(
      h,
      Array.from({ length: 400 }, (_, i) => probe({ fingerprint: answer(i % 10 === 3 ? "3" : "7", i % 10 === 3 ? LLR_MISS : LLR_HIT) })),
    );
    expect(out.factor).toBe(1);
    expect(out.evidence.content).toBe(0);
    expect(out.fingerprints["fp-number-10"]?.own).toBeLessThan(H);
  });

  it("a fingerprint answer's length does not teach the length anchors", () => {
    const h = run(initialHealth(T0), [
      probe({ fingerprint: answer("7"), contentLength: 1 }),
      probe({ sample: "json", contentLength: 300 }),
    ]).h;
    expect(Object.keys(h.lengths)).toEqual(["json"]);
  });
});

describe("usage in health", () => {
  it("prompt tokens per phrasing and completion tokens per character learn while healthy at full weight from passing probes", () => {
    const usage = (input: number, output: number): UsageStep => ({ variant: "", input, output, chars: 400 });
    const { h } = run(initialHealth(T0), [
      ...Array.from({ length: 30 }, () => probe({ sample: "json", usage: usage(70, 100) })),
      probe({ sample: "json", passed: false, usage: usage(84, 120) }),
    ]);
    const u = h.usage.json;
    expect(u?.prompt[""]).toEqual({ anchor: 70, n: 21, recent: [70, 70, 70, 70, 84], low: 70 });
    expect(u?.ratio.anchor).toBeCloseTo(0.25, 9);
    expect(u?.ratio.chars).toBe(400);
    expect(describeHealth(h, policy).usage.json).toEqual({ promptTokens: { "": 70 }, tokensPerChar: 0.25, failing: null });
  });
});

describe("shape in health", () => {
  it("a change of the answers' shape is an event and fast probing; not twice for the same shape; it counts as recent for an hour", () => {
    const learned = run(
      initialHealth(T0),
      Array.from({ length: SHAPE_WARMUP + 5 }, () => probe({ sample: "json", shape: OPENAI })),
    );
    const { h, effects, now } = run(
      learned.h,
      Array.from({ length: SHAPE_CHANGE_RUN + 3 }, () => probe({ sample: "json", shape: OTHER })),
      learned.now,
    );
    const change = effects.filter((e) => e.kind === "shape_change");
    expect(change).toHaveLength(1);
    expect(change[0]).toMatchObject({ from: OPENAI, to: OTHER });
    expect(change[0]?.kind === "shape_change" && change[0].detail).toBe(
      "the answers' protocol shape changed (id chatcmpl-{an29} → chatcmpl-{uuid}; fields gone: usage)",
    );
    const fast = effects.find((e) => e.kind === "fast_probe_until");
    expect(fast).toMatchObject({ until: (change[0]?.at ?? 0) + policy.fastProbeMs });
    expect(h.fastProbeUntil).toBe((change[0]?.at ?? 0) + policy.fastProbeMs);
    // The shape alone decides nothing.
    expect(h.phase.state).toBe("healthy");
    expect(h.factor).toBe(1);
    expect(shapeChangedRecently(h.shape, now)).toBe(true);
    expect(shapeChangedRecently(h.shape, (change[0]?.at ?? 0) + 61 * MIN)).toBe(false);
  });

  it("strange shapes before the warm-up, or fewer than three in a row, are not a change", () => {
    const young = run(
      initialHealth(T0),
      Array.from({ length: 10 }, (_, i) => probe({ sample: "json", shape: i % 2 ? OTHER : OPENAI })),
    );
    expect(young.effects.filter((e) => e.kind === "shape_change")).toEqual([]);
    const learned = run(
      initialHealth(T0),
      Array.from({ length: 40 }, () => probe({ sample: "json", shape: OPENAI })),
    );
    const some = run(
      learned.h,
      [OTHER, OTHER, OPENAI, OTHER, OTHER, OPENAI].map((s) => probe({ sample: "json", shape: s })),
      learned.now,
    );
    expect(some.effects.filter((e) => e.kind === "shape_change")).toEqual([]);
  });
});

describe("a restart keeps what a relay can fake", () => {
  it("health JSON round trip through parseHealth keeps fingerprint anchors and statistics, usage and shape", () => {
    let h = anchored();
    h = run(h, [
      probe({ fingerprint: answer("3", LLR_MISS) }),
      probe({ sample: "json", usage: { variant: "", input: 70, output: 100, chars: 400 }, shape: OPENAI }),
    ]).h;
    const restored = parseHealth(JSON.parse(JSON.stringify(h)));
    expect(restored).toEqual(h);
    // And it goes on exactly as the original would.
    const next = probe({ fingerprint: answer("3", LLR_MISS) });
    expect(transition(restored as Health, next, policy, T0 + DAY).health).toEqual(transition(h, next, policy, T0 + DAY).health);
  });

  it("unreadable parts start over; nothing else is lost", () => {
    const h = anchored();
    const stored = JSON.parse(JSON.stringify(h));
    stored.fingerprints["fp-number-10"].variants.v1.anchor.shares = { "7": "a lot", "3": 2 };
    stored.fingerprints.broken = "nope";
    stored.usage = [1, 2];
    stored.shape = { shares: { x: -1 }, n: "many" };
    const restored = parseHealth(stored) as Health;
    expect(restored.fingerprints["fp-number-10"]?.variants.v1?.anchor).toEqual({ shares: {}, n: 0 });
    expect(restored.fingerprints.broken).toBeUndefined();
    expect(restored.usage).toEqual({});
    expect(restored.shape).toEqual({ shares: {}, n: 0, strangers: 0, changedAt: null, changedTo: null });
    expect(restored.phase).toEqual(h.phase);
    // A record written before fingerprints existed reads as a line without them.
    const { fingerprints: _f, usage: _u, shape: _s, ...old } = JSON.parse(JSON.stringify(initialHealth(T0)));
    expect(parseHealth(old)).toEqual(initialHealth(T0));
  });
});

const DAY = 24 * 60 * MIN;
