// Many virtual lines on one server, each with its own mode and state; answers follow the seed.

import { type Lab, type LineOptions, startLab } from "@linewatch/lab";
import { afterEach, describe, expect, it } from "vitest";
import { chat, nextNonce, probeBody, sample, shippedSamples } from "./lab-helpers";

const labs: Lab[] = [];
async function lab(lines: LineOptions[]): Promise<Lab> {
  const started = await startLab({ lines });
  labs.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(labs.splice(0).map((l) => l.close()));
});

/** A fixed mix of the shipped samples with fixed nonces: the same script for every lab. */
const SCRIPT = [...shippedSamples().values()].flatMap((s, i) => [0, 1, 2].map((k) => probeBody(s, `lw-script${i}${k}aa`)));
const PLAIN_MIX = ["What should I cook tonight?", "Name a colour."].map((content) => ({ messages: [{ role: "user", content }] }));

async function answers(base: string): Promise<string[]> {
  const out: string[] = [];
  for (const body of [...SCRIPT, ...PLAIN_MIX]) out.push((await chat(base, body)).content);
  return out;
}

describe("determinism", () => {
  it("two labs with the same seed give the same answer sequence", async () => {
    const a = await lab([{ name: "x", seed: 1234 }]);
    const b = await lab([{ name: "renamed", seed: 1234 }]);
    const first = await answers(a.baseUrl("x"));
    expect(await answers(b.baseUrl("renamed"))).toEqual(first);
  });

  it("a different seed gives different wording but the same right answers", async () => {
    const a = await lab([{ name: "x", seed: 1 }]);
    const b = await lab([{ name: "x", seed: 2 }]);
    const [one, two] = [await answers(a.baseUrl("x")), await answers(b.baseUrl("x"))];
    expect(one).not.toEqual(two);
    const travel = SCRIPT.map((body, i) => [body, i] as const).filter(([body]) => JSON.stringify(body).includes("14:35"));
    for (const [, i] of travel) expect([one[i], two[i]]).toEqual(["155", "155"]);
  });

  it("without a seed, the line name seeds it", async () => {
    const a = await lab([{ name: "same-name" }]);
    const b = await lab([{ name: "same-name" }, { name: "other-name" }]);
    const first = await answers(a.baseUrl("same-name"));
    expect(await answers(b.baseUrl("same-name"))).toEqual(first);
    expect(await answers(b.baseUrl("other-name"))).not.toEqual(first);
  });

  it("errors at a rate are seeded too", async () => {
    const options: LineOptions = { name: "x", seed: "dice", mode: { mode: "flaky", fault: "errors", rate: 0.5 } };
    const statuses = async (l: Lab) => {
      const out: number[] = [];
      for (let i = 0; i < 20; i++) out.push((await chat(l.baseUrl("x"), probeBody(sample("travel-minutes"), "lw-fixed00"))).status);
      return out;
    };
    const first = await statuses(await lab([options]));
    expect(first.filter((_, i) => i % 2 === 0).every((s) => s === 200)).toBe(true);
    expect(await statuses(await lab([options]))).toEqual(first);
  });
});

describe("many virtual lines on one server", () => {
  it("each line has its own mode, counters and stale cache", async () => {
    const names = Array.from({ length: 12 }, (_, i) => `line-${String(i).padStart(2, "0")}`);
    const l = await lab(names.map((name) => ({ name })));
    expect(new Set(names.map((n) => new URL(l.baseUrl(n)).port)).size).toBe(1);

    l.setMode("line-03", "errors");
    l.setMode("line-07", "downgrade");
    l.setMode("line-09", "stale");
    const results = await Promise.all(names.map((n) => chat(l.baseUrl(n), probeBody(sample("travel-minutes"), nextNonce()))));
    results.forEach((r, i) => {
      const name = names[i] as string;
      if (name === "line-03") expect(r.status).toBe(500);
      else expect([r.status, r.content]).toEqual([200, name === "line-07" ? "145" : "155"]);
    });
    for (const name of names) expect(l.stats(name).requests).toBe(1);

    // line-09 is stale, but it had nothing cached for this prompt: it answers fresh once.
    const nonce = nextNonce();
    const fresh = await chat(l.baseUrl("line-09"), probeBody(sample("nonce-echo"), nonce));
    expect(fresh.content).toContain(nonce);
    const replay = await chat(l.baseUrl("line-09"), probeBody(sample("nonce-echo"), nextNonce()));
    expect(replay.content).toBe(fresh.content);
    // Its neighbour shares nothing with it.
    const neighbourNonce = nextNonce();
    expect((await chat(l.baseUrl("line-08"), probeBody(sample("nonce-echo"), neighbourNonce))).content).toContain(neighbourNonce);
  });

  it("hosts 1000 lines, each answering, and adds one at run time", async () => {
    const l = await lab(Array.from({ length: 1000 }, (_, i) => ({ name: `bench-${i}` })));
    l.setMode("bench-500", "rate-limit");
    const statuses = new Map<number, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < 1000) {
          const i = next++;
          const { status } = await chat(l.baseUrl(`bench-${i}`), probeBody(sample("nonce-echo"), nextNonce()));
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    expect(Object.fromEntries(statuses)).toEqual({ 200: 999, 429: 1 });
    expect(l.stats("bench-999").byEndpoint["chat.completions"]).toBe(1);

    const added = l.addLine({ name: "late", mode: "downgrade" });
    expect(added).toBe(l.baseUrl("late"));
    expect((await chat(added, probeBody(sample("travel-minutes"), nextNonce()))).content).toBe("145");
  });
});
