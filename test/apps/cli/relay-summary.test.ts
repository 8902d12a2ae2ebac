// `linewatch health LINE` shows what a relay can fake: the fingerprint, usage and shape verdicts,
// the billing evidence, and per fingerprint sample the anchored answers against the latest.
import { describe, expect, it } from "vitest";
import { relaySummary } from "../../../apps/cli/src/commands/health";
import type { LineHealth } from "../../../apps/cli/src/types";

const relay = (over: Partial<LineHealth["relay"]> = {}): LineHealth["relay"] => ({
  fingerprints: [
    {
      sampleId: "s1",
      sample: "fp-animal",
      own: 18.2,
      peers: 20.1,
      threshold: 17.46,
      failing: ["own", "peers"],
      variants: [{ variant: "abc", anchor: [{ answer: "owl", share: 0.97 }], answers: 40, latest: [{ answer: "wolf", count: 8 }] }],
    },
    {
      sampleId: "s2",
      sample: "fp-number-10",
      own: 0,
      peers: 0,
      threshold: 17.46,
      failing: [],
      variants: [{ variant: "def", anchor: [], answers: 0, latest: [] }],
    },
  ],
  usage: [
    {
      sampleId: "s3",
      sample: "travel-minutes",
      failing: "inflated usage: prompt tokens 54 for the same prompt, this line's anchor 45",
      promptTokens: { x: 45 },
      tokensPerChar: 0.25,
    },
  ],
  shape: {
    usual: "chatcmpl-{hex24} choices,id",
    answers: 120,
    changedAt: "2026-12-04T10:00:00.000Z",
    changedTo: "{uuid} id",
    recentlyChanged: true,
  },
  billing: {
    since: "2026-12-03T10:00:00.000Z",
    probes: 300,
    claimedInput: 1200,
    expectedInput: 1000,
    claimedOutput: 60,
    expectedOutput: 50,
    inflation: 1.2,
    usageFailures: 12,
  },
  ...over,
});

describe("linewatch health LINE: what a relay can fake", () => {
  it("names the moved fingerprint samples, the failing usage, the billing evidence and a recent shape change", () => {
    const { fields, table } = relaySummary(relay());
    const f = Object.fromEntries(fields);
    expect(f.fingerprint).toBe("MOVED: fp-animal (own, peers)");
    expect(f.usage).toBe("FAILING: travel-minutes: inflated usage: prompt tokens 54 for the same prompt, this line's anchor 45");
    expect(f["billing (24 h)"]).toBe("claimed 1200 in / 60 out, expected 1000 in / 50 out (120.0%), 12 usage failure(s) in 300 probes");
    expect(f.shape).toMatch(/^chatcmpl-\{hex24\} choices,id \(120 answers\); changed .+ \(RECENT\)$/);
    expect(table).toContain("fp-animal");
    expect(table).toContain("owl 97% (40 answers)");
    expect(table).toContain("wolf ×8");
    expect(table).toContain("none yet");
  });

  it("says all is as anchored when nothing moved, and says so when there is nothing to show", () => {
    const calm = relaySummary(
      relay({
        fingerprints: [],
        usage: [{ sampleId: "s3", sample: "travel-minutes", failing: null, promptTokens: {}, tokensPerChar: null }],
        shape: null,
        billing: {
          since: "x",
          probes: 0,
          claimedInput: 0,
          expectedInput: 0,
          claimedOutput: 0,
          expectedOutput: 0,
          inflation: null,
          usageFailures: 0,
        },
      }),
    );
    const f = Object.fromEntries(calm.fields);
    expect(f.fingerprint).toBe("no fingerprint sample");
    expect(f.usage).toBe("as expected (1 samples)");
    expect(f["billing (24 h)"]).toBe("no usage reported");
    expect(f.shape).toBeNull();
    expect(calm.table).toBeNull();
  });
});
