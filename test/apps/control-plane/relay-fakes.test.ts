// What a relay can fake, through the whole shell (issue 25): lab lines serving the simulated models
// over HTTP, the prober rotating phrasings and judging fingerprints and usage against the line's own
// anchors and its paid peers', health storing the tracks (and keeping them across a restart), events
// naming the moved samples, the usage failure and the billing evidence in GET /v1/lines/:id/health.
// Driven by manual probes (POST /v1/lines/:id/probe), round after round: no waiting in real time.
// On PGlite, or on PostgreSQL with DATABASE_URL (CI runs both).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LineHealth } from "@linewatch/contract";
import { mulberry32, type ReplayReport } from "@linewatch/core";
import { FINGERPRINT_BANK, type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { createLine, createRoute, probeNow, type ResultView } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { createTestDatabase } from "../../helpers/test-db";

/** A probes directory with these fingerprint prompts of the bank (each with `phrasings` of its phrasings) and one golden sample. */
function probesDir(prompts: string[], phrasings: number): string {
  const dir = mkdtempSync(join(tmpdir(), "lw-relay-probes-"));
  for (const id of prompts) {
    const p = FINGERPRINT_BANK.find((x) => x.id === id);
    if (!p) throw new Error(`no prompt ${id} in the bank`);
    const sample = {
      name: id,
      protocol: "openai-chat",
      request: { messages: [{ role: "user", content: p.phrasings[0] }], max_tokens: p.maxTokens, temperature: 0 },
      expect: { fingerprint: { form: p.form, ...(p.options ? { options: [...p.options] } : {}) } },
      variants: p.phrasings.slice(1, phrasings),
    };
    writeFileSync(join(dir, `${id}.yaml`), stringify(sample));
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
  return dir;
}

const PROMPTS = ["fp-animal", "fp-number-10", "fp-pick-fruit", "fp-ocean-word"];

interface World {
  cp: TestControlPlane;
  lab: Lab;
  ids: Record<string, string>;
  dir: string;
}

async function startWorld(
  lines: { name: string; tier: "paid" | "free" }[],
  phrasings: number,
  opts: { persistent?: boolean; prompts?: string[] } = {},
): Promise<World> {
  const persistent = opts.persistent ?? false;
  const dir = probesDir(opts.prompts ?? PROMPTS, phrasings);
  const lab = await startLab({ lines: lines.map((l) => ({ name: l.name })) });
  const testDb = await createTestDatabase({ persistent });
  const cp = await startTestControlPlane({
    testDb,
    env: { LINEWATCH_PROBES_DIR: dir, LINEWATCH_SHIPPED_FINGERPRINTS: "true" },
    rng: mulberry32(7),
  });
  await createRoute(cp, "chat");
  const ids: Record<string, string> = {};
  for (const l of lines)
    ids[l.name] = (
      await createLine(cp, { name: l.name, tier: l.tier, baseUrl: lab.baseUrl(l.name), routes: [{ route: "chat", weight: 100 }] })
    ).id;
  return { cp, lab, ids, dir };
}

async function stopWorld(w: World | undefined): Promise<void> {
  await w?.cp.stop();
  await w?.cp.testDb.dispose();
  await w?.lab.close();
  if (w) rmSync(w.dir, { recursive: true, force: true });
}

const health = async (w: World, name: string) => (await (await w.cp.request(`/v1/lines/${w.ids[name]}/health`)).json()) as LineHealth;

/** One probe of every sample on each of these lines; the results by line. */
async function round(w: World, names: string[]): Promise<Record<string, ResultView[]>> {
  const out: Record<string, ResultView[]> = {};
  for (const name of names) out[name] = await probeNow(w.cp, w.ids[name] as string);
  return out;
}

const failed = (results: ResultView[], check: string) =>
  results.filter((r) => r.checks.some((c) => c.name === check && c.verdict === "fail"));

async function eventsOf(w: World, name: string, kind: string) {
  const res = await w.cp.request(`/v1/events?line=${name}&kind=${kind}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: { kind: string; reason: string; data: Record<string, unknown> }[] }).events;
}

describe("a substituted line, an inflating one and honest ones (one phrasing per sample)", () => {
  let w: World;
  const lines = [
    { name: "paid-a", tier: "paid" as const },
    { name: "paid-b", tier: "paid" as const },
    { name: "free-sub", tier: "free" as const },
    { name: "free-usage", tier: "free" as const },
    { name: "free-shape", tier: "free" as const },
  ];
  const names = lines.map((l) => l.name);

  beforeAll(async () => {
    w = await startWorld(lines, 1, { persistent: true });
    // Anchors: 20 answers per phrasing before the line's own and its peers' are compared with.
    for (let i = 0; i < 22; i++) await round(w, names);
  }, 120_000);
  afterAll(() => stopWorld(w));

  it("anchors the fingerprints while healthy, and a restart keeps them (health in the database)", async () => {
    const before = await health(w, "free-sub");
    expect(before.relay.fingerprints.map((f) => f.sample).sort()).toEqual([...PROMPTS].sort());
    for (const f of before.relay.fingerprints) {
      expect(f.failing, f.sample).toEqual([]);
      expect(f.variants[0]?.answers, f.sample).toBeGreaterThanOrEqual(20);
    }
    expect(before.relay.usage.every((u) => u.failing === null)).toBe(true);
    expect(before.relay.shape?.usual).toMatch(/^chatcmpl-\{hex24\} /);
    w.cp = await w.cp.restart();
    const after = await health(w, "free-sub");
    expect(after.relay.fingerprints).toEqual(before.relay.fingerprints);
    expect(after.relay.usage).toEqual(before.relay.usage);
  });

  it("a usage ×1.2 line fails the usage check at its first probe, with billing evidence; its usage event names the sample", async () => {
    w.lab.setMode("free-usage", "inflate-usage", { factor: 1.2 });
    const first = (await round(w, ["free-usage"]))["free-usage"] ?? [];
    const usageFailed = failed(first, "usage");
    expect(usageFailed.length).toBeGreaterThan(0);
    expect(usageFailed[0]?.checks.find((c) => c.name === "usage")?.detail).toMatch(/^inflated usage: prompt tokens/);
    const h = await health(w, "free-usage");
    expect(h.relay.usage.some((u) => u.failing !== null)).toBe(true);
    expect(h.relay.billing.usageFailures).toBeGreaterThan(0);
    expect(h.relay.billing.claimedInput).toBeGreaterThan(h.relay.billing.expectedInput);
    const events = await eventsOf(w, "free-usage", "usage");
    expect(events.length).toBeGreaterThan(0);
    expect(events[0]?.data.failing).toBe(true);
    expect(events[0]?.reason).toMatch(/^usage of sample .+: inflated usage/);
  });

  it("a shape change is an event and raises the probe frequency, and fails nothing by itself", async () => {
    w.lab.setMode("free-shape", "shape-change");
    const results = (await round(w, ["free-shape"]))["free-shape"] ?? [];
    expect(results.every((r) => r.passed)).toBe(true);
    const h = await health(w, "free-shape");
    expect(h.relay.shape?.recentlyChanged).toBe(true);
    expect(h.relay.shape?.changedTo).toMatch(/^\{uuid\} .*provider/);
    expect(h.fastProbeUntil).not.toBeNull();
    expect(h.weightFactor).toBe(1);
    const events = await eventsOf(w, "free-shape", "shape_change");
    expect(events).toHaveLength(1);
    expect(events[0]?.reason).toMatch(/^the answers' protocol shape changed \(id chatcmpl-\{hex24\} → \{uuid\}; new fields: .*provider/);
  });

  it("a line substituted mid-run goes to a factor ≤ 0.5; a fingerprint event names the moved samples (anchor's answers vs now); honest lines stay", async () => {
    w.lab.setMode("free-sub", "substitute", { share: 1, differOn: 1 });
    let rounds = 0;
    for (; rounds < 30; rounds++) {
      await round(w, ["paid-a", "paid-b", "free-sub"]);
      if ((await health(w, "free-sub")).weightFactor <= 0.5) break;
    }
    // 16.5 of evidence at ~1.5 a miss: about a dozen answers per sample, then content failures decide.
    expect(rounds).toBeLessThan(30);
    const sub = await health(w, "free-sub");
    expect(sub.weightFactor).toBeLessThanOrEqual(0.5);
    expect(sub.relay.fingerprints.filter((f) => f.failing.length > 0).length).toBeGreaterThan(0);
    const events = await eventsOf(w, "free-sub", "fingerprint");
    const moved = events.filter((e) => e.data.moved === true);
    expect(moved.length).toBeGreaterThan(0);
    const names = new Set(moved.map((e) => String(e.data.sampleId)));
    const sampleNames = new Set(sub.relay.fingerprints.filter((f) => names.has(f.sampleId)).map((f) => f.sample));
    expect([...sampleNames].every((n) => PROMPTS.includes(n))).toBe(true);
    const e = moved[0];
    expect(e?.reason).toMatch(/^fingerprint of sample .+: .+ anchor/);
    expect((e?.data.anchor as unknown[] | undefined)?.length).toBeGreaterThan(0);
    expect((e?.data.now as unknown[] | undefined)?.length).toBeGreaterThan(0);
    // The dashboard's line page says so.
    const page = await (await w.cp.request("/lines/free-sub")).text();
    expect(page).toContain('data-verdict="fingerprint-moved"');
    expect(page).toContain('id="p-fingerprints"');
    expect(await (await w.cp.request("/lines/free-usage")).text()).toContain('data-verdict="usage-failing"');
    for (const name of ["paid-a", "paid-b"]) {
      const h = await health(w, name);
      expect(h.weightFactor, name).toBe(1);
      expect(
        h.relay.fingerprints.every((f) => f.failing.length === 0),
        name,
      ).toBe(true);
      expect(
        h.relay.usage.every((u) => u.failing === null),
        name,
      ).toBe(true);
      expect(await eventsOf(w, name, "fingerprint"), name).toEqual([]);
    }
  }, 60_000);

  it("a replay of the substitution takes the line out of the table as it went live, from the stored relay evidence (docs/replay.md)", async () => {
    for (let i = 0; i < 30 && (await health(w, "free-sub")).weightFactor > 0; i++) await round(w, ["paid-a", "paid-b", "free-sub"]);
    expect((await health(w, "free-sub")).weightFactor).toBe(0);
    const res = await w.cp.request("/v1/replay", { method: "POST", json: { since: "1h", timeline: "free-sub" } });
    expect(res.status, await res.clone().text()).toBe(200);
    const report = (await res.json()) as ReplayReport;
    const line = (name: string) => report.lines.find((l) => l.name === name);
    const sub = line("free-sub");
    expect(sub?.actual.cooldowns.length).toBeGreaterThan(0);
    expect(sub?.proposed.cooldowns.length).toBe(sub?.actual.cooldowns.length);
    // At the same moment as live, the moved fingerprints named in the cause (the replay stepped the stored fingerprint evidence).
    const at = (x: { at: string } | undefined) => Date.parse(x?.at ?? "");
    expect(Math.abs(at(sub?.proposed.cooldowns[0]) - at(sub?.actual.cooldowns[0]))).toBeLessThan(5_000);
    expect(sub?.proposed.cooldowns[0]?.reason).toMatch(/; fingerprints moved: .+ \(peers\)/);
    // Its fingerprint answers teach no length anchor (a substitute's shorter words are no truncation): no
    // degraded spell that did not happen live.
    expect(Object.keys(sub?.proposed.stateMinutes ?? {}).sort()).toEqual(Object.keys(sub?.actual.stateMinutes ?? {}).sort());
    expect(report.notes.join(" ")).toMatch(/Relay verdicts \(fingerprint, usage\) are the stored ones, not re-run/);
    const timeline = report.timelines.find((t) => t.line === "free-sub");
    expect(timeline?.proposed.at(-1)?.factor).toBe(0);
    // The honest lines and the ones that only inflated usage or changed shape: as recorded.
    for (const name of ["paid-a", "paid-b", "free-shape"]) {
      expect(line(name)?.proposed.cooldowns, name).toEqual([]);
      expect(line(name)?.proposed.zeroWeight, name).toEqual([]);
    }
  }, 60_000);
});

describe("relays that answer well only what looks like a probe (two phrasings per sample)", () => {
  let w: World;
  const lines = [
    { name: "paid-a", tier: "paid" as const },
    { name: "paid-b", tier: "paid" as const },
    { name: "by-prompt", tier: "free" as const },
    { name: "by-header", tier: "free" as const },
  ];

  beforeAll(async () => {
    // Two prompts are enough to show it (fewer probes per round: the fast suite stays fast).
    w = await startWorld(lines, 2, { prompts: ["fp-animal", "fp-pick-fruit"] });
    // From the start: they never answer rotated phrasings (or header-less probes) with the real model.
    w.lab.setMode("by-prompt", "recognise-probes", { by: "fixed-prompt", differOn: 1 });
    w.lab.setMode("by-header", "recognise-probes", { by: "header", header: "x-probe", differOn: 1 });
  }, 60_000);
  afterAll(() => stopWorld(w));

  it("are caught against their paid peers: probes rotate phrasings and carry no marking header", async () => {
    let caught: Record<string, number> = {};
    for (let i = 0; i < 90 && Object.keys(caught).length < 2; i++) {
      const results = await round(w, ["paid-a", "paid-b", "by-prompt", "by-header"]);
      for (const name of ["by-prompt", "by-header"])
        if (caught[name] === undefined && failed(results[name] ?? [], "fingerprint").length > 0) caught = { ...caught, [name]: i };
    }
    expect(Object.keys(caught).sort()).toEqual(["by-header", "by-prompt"]);
    for (const name of ["by-prompt", "by-header"]) {
      const h = await health(w, name);
      expect(
        h.relay.fingerprints.some((f) => f.failing.includes("peers")),
        name,
      ).toBe(true);
    }
    // The honest paid lines never failed a fingerprint.
    for (const name of ["paid-a", "paid-b"]) expect(await eventsOf(w, name, "fingerprint"), name).toEqual([]);
    // No probe carried the header the relay looks for.
    for (const r of w.lab.requests("by-header")) expect(r.headers.some(([k]) => k.toLowerCase() === "x-probe")).toBe(false);
  }, 90_000);
});

describe("the shipped starter bank", () => {
  let cp: TestControlPlane;
  let lab: Lab;
  const PROTOCOLS = ["openai-chat", "openai-responses", "anthropic-messages"] as const;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    lab = await startLab({ lines: PROTOCOLS.map((p) => ({ name: p })) });
    cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_FINGERPRINTS: "true" } });
    await createRoute(cp, "chat");
    for (const protocol of PROTOCOLS)
      ids[protocol] = (
        await createLine(cp, { name: protocol, protocol, baseUrl: lab.baseUrl(protocol), routes: [{ route: "chat", weight: 1 }] })
      ).id;
  }, 60_000);
  afterAll(async () => {
    await cp?.stop();
    await cp?.testDb.dispose();
    await lab?.close();
  });

  it.each(PROTOCOLS)(
    "%s: the bank's ten prompts, three phrasings each, answered short and passing; the probes carry nothing that marks them",
    async (protocol) => {
      const samples = (
        (await (await cp.request("/v1/samples")).json()) as {
          samples: { name: string; protocol: string; expect: { fingerprint?: unknown }; variants: string[] }[];
        }
      ).samples.filter((s) => s.protocol === protocol && s.expect.fingerprint);
      expect(samples.map((s) => s.name.replace(/^(anthropic|responses)-/, "")).sort()).toEqual(FINGERPRINT_BANK.map((p) => p.id).sort());
      expect(samples.every((s) => s.variants.length === 2)).toBe(true);
      const results = (await probeNow(cp, ids[protocol] as string)).filter((r) => r.sample.includes("fp-"));
      expect(results).toHaveLength(10);
      for (const r of results) {
        expect(r.passed, r.sample).toBe(true);
        expect(r.checks.find((c) => c.name === "fingerprint")?.verdict, r.sample).toBe("pass");
        expect(r.contentLength, r.sample).toBeLessThan(40);
      }
      const probes = lab.requests(protocol).slice(-14);
      for (const p of probes) {
        const all = `${p.headers.map(([k, v]) => `${k}: ${v}`).join("\n")}\n${p.body}`;
        expect(all.toLowerCase()).not.toContain("linewatch");
        expect(all).not.toMatch(/\blw-/);
      }
      // Anthropic's current API version refuses temperature: a fingerprint probe (temperature 0) goes as a 0.x SDK does.
      if (protocol === "anthropic-messages")
        for (const p of probes.filter((x) => x.body.includes('"temperature":0')))
          expect(p.headers.find(([k]) => k.toLowerCase() === "anthropic-version")?.[1]).toBe("2023-06-01");
    },
  );

  it("a fingerprint sample without temperature 0, or with a long answer, is refused with a 400 naming the field", async () => {
    const base = {
      name: "my-fp",
      protocol: "openai-chat",
      request: { messages: [{ role: "user", content: "Pick a colour. One word." }], max_tokens: 8, temperature: 0 },
      expect: { fingerprint: { form: "word" } },
      variants: ["Choose a colour, one word only."],
    };
    const refused = async (body: unknown, field: string) => {
      const res = await cp.request("/v1/samples", { method: "POST", json: body });
      expect(res.status).toBe(400);
      const err = (await res.json()) as { error: { message: string; details: { field: string }[] } };
      expect(err.error.details.map((d) => d.field)).toContain(field);
    };
    await refused({ ...base, request: { ...base.request, temperature: 0.7 } }, "request.temperature");
    await refused({ ...base, request: { ...base.request, max_tokens: 400 } }, "request.max_tokens");
    await refused({ ...base, expect: { fingerprint: { form: "choice" } } }, "expect.fingerprint.options");
    await refused({ ...base, variants: Array.from({ length: 9 }, (_, i) => `phrasing ${i}`) }, "variants");
    const created = await cp.request("/v1/samples", { method: "POST", json: base });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    // A patch is checked against the sample it makes.
    const patched = await cp.request(`/v1/samples/${id}`, { method: "PATCH", json: { request: { ...base.request, temperature: 1 } } });
    expect(patched.status).toBe(400);
    expect(((await patched.json()) as { error: { details: { field: string }[] } }).error.details[0]?.field).toBe("request.temperature");
    expect((await cp.request(`/v1/samples/${id}`, { method: "DELETE" })).status).toBe(204);
  });
});
