// The simulated models the fingerprint judgment is tuned on (packages/lab/src/models.ts): pure,
// seeded, and varying the way real models do at temperature 0.
import { describe, expect, it } from "vitest";
import { mulberry32, normalizeFingerprintAnswer } from "../../../packages/core/src/index";
import {
  answerText,
  buildModel,
  byFixedPrompt,
  byHeader,
  FINGERPRINT_BANK,
  honest,
  modalDifference,
  modeOf,
  recognisesProbes,
  reportedTokens,
  siblingModel,
  substitute,
  withSecondChoice,
} from "../../../packages/lab/src/models";

const model = (seed: number) => buildModel({ name: "m-large", seed });

describe("the starter bank", () => {
  it("each prompt has three phrasings, a short answer form, a token limit of at most 32, and a source", () => {
    expect(FINGERPRINT_BANK.length).toBeGreaterThanOrEqual(8);
    expect(new Set(FINGERPRINT_BANK.map((p) => p.id)).size).toBe(FINGERPRINT_BANK.length);
    for (const p of FINGERPRINT_BANK) {
      expect(p.phrasings.length, p.id).toBe(3);
      expect(new Set(p.phrasings).size, p.id).toBe(3);
      expect(p.maxTokens).toBeLessThanOrEqual(32);
      expect(p.source.length).toBeGreaterThan(20);
      if (p.form === "choice") for (const a of p.answers) expect(p.options).toContain(a);
    }
  });
});

describe("simulated models", () => {
  it("are deterministic from their seed, and their distributions are probabilities", () => {
    expect(model(3)).toEqual(model(3));
    expect(model(3)).not.toEqual(model(4));
    for (const p of FINGERPRINT_BANK)
      for (const d of model(3).answers[p.id] ?? []) {
        const total = Object.values(d).reduce((a, x) => a + x, 0);
        expect(total).toBeCloseTo(1, 9);
        // Mostly the same answer: the second choice at 0–10%, a third under 1%.
        expect(d[modeOf(d)]).toBeGreaterThanOrEqual(0.89);
      }
  });

  it("two independent models agree on some prompts and differ on others", () => {
    const pairs = Array.from({ length: 20 }, (_, i) => [model(i + 1), model(i + 101)] as const);
    for (const p of FINGERPRINT_BANK) {
      const same = pairs.filter(([a, b]) => modeOf(a.answers[p.id]?.[0] ?? {}) === modeOf(b.answers[p.id]?.[0] ?? {})).length;
      expect(same, p.id).toBeGreaterThan(0);
      expect(same, p.id).toBeLessThan(pairs.length);
    }
    const mean = pairs.reduce((acc, [a, b]) => acc + modalDifference(a, b), 0) / pairs.length;
    expect(mean).toBeGreaterThan(0.5);
    expect(mean).toBeLessThan(0.95);
  });

  it("a sibling differs from its base on the share of prompts asked for, on every phrasing", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const base = model(seed);
      const sib = siblingModel(base, { name: "m-mini", seed: seed + 1000, differOn: 0.3 });
      expect(modalDifference(base, sib)).toBe(0.3);
      const moved = FINGERPRINT_BANK.filter((p) => modeOf(base.answers[p.id]?.[0] ?? {}) !== modeOf(sib.answers[p.id]?.[0] ?? {}));
      for (const p of moved)
        for (let i = 0; i < 3; i++) expect(modeOf(sib.answers[p.id]?.[i] ?? {})).not.toBe(modeOf(base.answers[p.id]?.[i] ?? {}));
    }
  });

  it("nondeterminism: the same model answering its second choice 10% of the time", () => {
    const m = withSecondChoice(model(7), 0.1, 7);
    const rng = mulberry32(1);
    const p = FINGERPRINT_BANK[0];
    if (!p) throw new Error("bank");
    const mode = modeOf(m.answers[p.id]?.[0] ?? {});
    let other = 0;
    for (let i = 0; i < 20_000; i++) if (normalizeFingerprintAnswer(answerText(m, p.id, 0, rng), { form: p.form }) !== mode) other++;
    expect(other / 20_000).toBeGreaterThan(0.09);
    expect(other / 20_000).toBeLessThan(0.11);
  });

  it("every answer a model writes reads back as its class, whatever its style", () => {
    for (const style of ["plain", "period", "bold", "sentence"] as const) {
      const m = buildModel({ name: "m", seed: 9, style });
      const rng = mulberry32(2);
      for (const p of FINGERPRINT_BANK)
        for (let i = 0; i < 3; i++) {
          const d = m.answers[p.id]?.[i] ?? {};
          const cls = normalizeFingerprintAnswer(answerText(m, p.id, i, rng), {
            form: p.form,
            ...(p.options ? { options: [...p.options] } : {}),
          });
          expect(
            Object.keys(d).map((a) => normalizeFingerprintAnswer(a, { form: p.form, ...(p.options ? { options: [...p.options] } : {}) })),
          ).toContain(cls);
        }
    }
  });
});

describe("relays", () => {
  const real = model(1);
  const cheap = siblingModel(real, { name: "m-mini", seed: 2, differOn: 0.3 });
  const req = (phrasing: number, headers: Record<string, string> = {}) => ({ promptId: "fp-animal", phrasing, headers });

  it("honest serves the model it names; substitute serves the other for a share of the requests", () => {
    const rng = mulberry32(5);
    expect(honest(real)(req(0), rng)).toBe(real);
    expect(substitute(real, cheap)(req(0), rng)).toBe(cheap);
    let other = 0;
    const quarter = substitute(real, cheap, 0.25);
    for (let i = 0; i < 10_000; i++) if (quarter(req(0), rng) === cheap) other++;
    expect(other / 10_000).toBeGreaterThan(0.23);
    expect(other / 10_000).toBeLessThan(0.27);
  });

  it("a relay that recognises a fixed prompt, or a header, answers those with the real model", () => {
    const rng = mulberry32(6);
    const byPrompt = recognisesProbes(real, cheap, byFixedPrompt(0));
    expect([0, 1, 2].map((i) => byPrompt(req(i), rng))).toEqual([real, cheap, cheap]);
    const byHdr = recognisesProbes(real, cheap, byHeader("X-Probe"));
    expect(byHdr(req(1, { "x-probe": "1" }), rng)).toBe(real);
    expect(byHdr(req(1, { "user-agent": "OpenAI/JS 6.30.1" }), rng)).toBe(cheap);
  });

  it("usage as reported: inflated by a factor, offset, jittered within ±jitter", () => {
    const rng = mulberry32(8);
    expect(reportedTokens(40, { factor: 1.2 }, rng)).toBe(48);
    expect(reportedTokens(40, { offset: -2 }, rng)).toBe(38);
    for (let i = 0; i < 1000; i++) {
      const x = reportedTokens(40, { jitter: 2 }, rng);
      expect(x).toBeGreaterThanOrEqual(38);
      expect(x).toBeLessThanOrEqual(42);
    }
  });
});
