import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canRunPrivatePostgres } from "../helpers/private-postgres";
import { type ControlPlaneProcess, startControlPlaneProcess } from "../helpers/process";
import { createLines, createRoute, eventually, faultDatabase, getTable, inspect, weights } from "./support";

// Issue 7: `kill -9` of the control plane while probes are in flight, then a restart: the same
// states, timers (cooldown end, probation stage, hold) and table versions, and no event twice.
// Issue 25: the fingerprint anchors (health too) are what the dead process wrote.
const LINES = ["steady", "broken", "mending", "spare"];

interface HealthView {
  state: string;
  weightFactor: number;
  cooldown: { until: string; durationMs: number } | null;
  probation: { stage: number; factor: number } | null;
  holdUntil: string | null;
  consecutiveFailures: number;
  evidence: { hard: number; content: number; hardRate: number; contentRate: Record<string, number> };
  lengths: Record<string, { anchored: number | null; recent: number | null }>;
  relay: {
    fingerprints: { sampleId: string; variants: { variant: string; answers: number; anchor: { answer: string; share: number }[] }[] }[];
  };
}

/** Samples per line: the four shipped golden ones and one fingerprint sample added through the API. */
const SAMPLES = 5;

let database: { url: string; dispose(): Promise<void> };
let lab: Lab;
let cp: ControlPlaneProcess;
let db: ReturnType<typeof inspect>;
let ids: Map<string, string>;
const secretKey = "a".repeat(64);

const health = async (name: string) => (await (await cp.request(`/v1/lines/${ids.get(name)}/health`)).json()) as HealthView;
const timers = (h: HealthView) => ({
  state: h.state,
  weightFactor: h.weightFactor,
  cooldown: h.cooldown,
  probation: h.probation,
  holdUntil: h.holdUntil,
});

beforeAll(async () => {
  database = await faultDatabase();
  // Slow answers (1.2 s) every 2 s per sample: some probe is nearly always in flight.
  lab = await startLab({ lines: LINES.map((name) => ({ name, baseLatencyMs: 1200 })) });
  cp = await startControlPlaneProcess({ databaseUrl: database.url, replicaId: "crash-a", secretKey });
  db = inspect(database.url);
  await createRoute(cp, "chat");
  const fp = await cp.request("/v1/samples", {
    method: "POST",
    json: {
      name: "fp-number",
      protocol: "openai-chat",
      request: {
        messages: [{ role: "user", content: "Pick a random number between 1 and 10. Answer with the number only, and no other text." }],
        max_tokens: 8,
        temperature: 0,
      },
      expect: { fingerprint: { form: "number" } },
    },
  });
  expect(fp.status).toBe(201);
  lab.setMode("broken", "errors");
  lab.setMode("mending", "errors");
  ids = await createLines(
    cp,
    "chat",
    LINES.map((name) => ({ name, baseUrl: lab.baseUrl(name), probeIntervalSec: 2, timeoutMs: 5000 })),
  );
}, 120_000);

afterAll(async () => {
  await cp?.stop();
  await db?.close();
  await lab?.close();
  await database?.dispose();
});

describe.skipIf(!process.env.DATABASE_URL && !canRunPrivatePostgres())("kill -9 mid-probe and restart", () => {
  it("keeps states, timers, table versions; probing resumes; no event or probe slot twice", async () => {
    // A line in cooldown, one in probation, their holds.
    await eventually(async () => (await health("broken")).state === "cooldown" && (await health("mending")).state === "cooldown", 60_000);
    lab.setMode("mending", "ok");
    await eventually(async () => (await health("mending")).state === "probation", 60_000);

    // Kill while a probe is in flight (claimed, not yet handed back).
    await eventually(
      async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from probe_schedule where claimed_by is not null`)[0]!.n > 0,
      20_000,
      20,
    );
    await cp.kill9();
    const claimedAtDeath = (await db.sql<{ n: number }[]>`select count(*)::int as n from probe_schedule where claimed_by is not null`)[0]!
      .n;
    expect(claimedAtDeath).toBeGreaterThan(0);
    const healthAtDeath = await db.health();
    const tableAtDeath = (
      await db.sql<
        { version: number; lines: { name: string; weight: number }[] }[]
      >`select version::int as version, lines from published_tables where route_name = 'chat'`
    )[0]!;
    const eventsAtDeath = await db.events();

    // Restart without the scheduler: what it serves is exactly what was stored when it died.
    cp = await startControlPlaneProcess({
      databaseUrl: database.url,
      replicaId: "crash-a",
      secretKey,
      env: { LINEWATCH_SCHEDULER: "false" },
    });
    const views = new Map<string, HealthView>();
    for (const name of LINES) views.set(name, await health(name));
    expect(views.get("broken")!.state).toBe("cooldown");
    expect(views.get("mending")!.state).toBe("probation");
    expect(views.get("steady")!.state).toBe("healthy");
    for (const row of healthAtDeath) {
      const name = [...ids].find(([, id]) => id === row.line_id)![0];
      const h = row.health as { phase?: { until?: number; stage?: number }; holdUntil?: number | null };
      const view = views.get(name)!;
      expect(view.state, name).toBe(row.state);
      if (view.cooldown) expect(Date.parse(view.cooldown.until), name).toBe(h.phase?.until);
      if (view.probation) expect(view.probation.stage, name).toBe(h.phase?.stage);
      expect(view.holdUntil === null ? null : Date.parse(view.holdUntil), name).toBe(h.holdUntil ?? null);
      // The evidence and the anchored lengths are health too: what the dead process wrote is what is read.
      const stored = row.health as {
        evidence?: { hard: number; hardRate: number; contentRate: Record<string, number> };
        lengths?: Record<string, { anchor: number | null; anchorN: number }>;
      };
      expect(view.evidence.hard, name).toBeCloseTo(stored.evidence?.hard ?? 0, 2);
      expect(view.evidence.hardRate, name).toBeCloseTo(stored.evidence?.hardRate ?? 0, 4);
      for (const [sample, t] of Object.entries(stored.lengths ?? {})) {
        const anchored = t.anchor !== null && t.anchorN >= 5 ? Math.round(Math.exp(t.anchor)) : null;
        expect(view.lengths[sample]?.anchored, `${name} ${sample}`).toBe(anchored);
      }
    }
    for (const row of healthAtDeath) {
      const name = [...ids].find(([, id]) => id === row.line_id)![0];
      const stored =
        (row.health as { fingerprints?: Record<string, { variants: Record<string, { anchor: { n: number } }> }> }).fingerprints ?? {};
      const served = views.get(name)!.relay.fingerprints;
      expect(served.map((f) => f.sampleId).sort(), name).toEqual(Object.keys(stored).sort());
      for (const f of served)
        for (const v of f.variants) expect(v.answers, `${name} ${v.variant}`).toBe(stored[f.sampleId]?.variants[v.variant]?.anchor.n);
    }
    const steadyFingerprints = views.get("steady")!.relay.fingerprints;
    expect(steadyFingerprints.some((f) => f.variants.some((v) => v.answers >= 1 && v.anchor.length > 0))).toBe(true);
    const steadyRow = healthAtDeath.find((r) => r.line_id === ids.get("steady"));
    const steadyLengths = (steadyRow?.health as { lengths?: Record<string, { anchorN: number }> } | undefined)?.lengths ?? {};
    expect(Object.values(steadyLengths).some((t) => t.anchorN >= 1)).toBe(true);
    const served = await getTable(cp, "chat");
    expect(served.body!.version).toBe(tableAtDeath.version);
    expect(weights(served.body!)).toEqual(Object.fromEntries(tableAtDeath.lines.map((l) => [l.name, l.weight])));
    expect(await db.events()).toEqual(eventsAtDeath);
    const before = Object.fromEntries(LINES.map((n) => [n, timers(views.get(n)!)]));

    // And again with the scheduler: every (line, sample) is probed again, the claims of the
    // killed process included.
    await cp.stop();
    cp = await startControlPlaneProcess({ databaseUrl: database.url, replicaId: "crash-a", secretKey });
    const restarted = new Date();
    await eventually(async () => {
      const rows = await db.lastProbeAt();
      return rows.length === LINES.length * SAMPLES && rows.every((r) => r.at !== null && r.at >= restarted);
    }, 30_000);
    const after = await health("steady");
    expect(timers(after)).toEqual(before.steady);
    expect((await health("broken")).state).toBe("cooldown");
    const mending = await health("mending");
    expect(["probation", "healthy"]).toContain(mending.state);

    // Nothing twice: a probe slot is stored once, an event recorded once, a probe moves a line once.
    expect(await db.duplicateSlots()).toEqual([]);
    const events = await db.events();
    expect(events.slice(0, eventsAtDeath.length)).toEqual(eventsAtDeath);
    const keys = events.map((e) => e.dedupe_key).filter((k) => k !== null);
    expect(new Set(keys).size).toBe(keys.length);
    const transitions = events
      .filter((e) => e.kind === "state_change")
      .map((e) => `${e.line_id}:${JSON.stringify((e.data as { probeIds?: string[] }).probeIds ?? [])}:${(e.data as { to: string }).to}`);
    expect(new Set(transitions).size).toBe(transitions.length);
    const versions = events
      .filter((e) => e.kind === "table_published" && e.route_name === "chat")
      .map((e) => (e.data as { version: number }).version);
    expect(new Set(versions).size).toBe(versions.length);
    expect(cp.stderr()).toBe("");
  }, 240_000);
});
