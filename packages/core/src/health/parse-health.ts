// Health as stored (JSON in line_health.health) → core's Health, once, where a row enters the program.
// Records written by an older version lack newer fields: those get their initial values here, so the
// state machine only ever sees a whole Health.
import { parseFingerprintTracks } from "../fingerprint/parse";
import { parseShapeTrack } from "../shape/shape";
import { parseUsageTracks } from "../usage/parse";
import { type Evidence, HEALTH_STATES, type Health, type LengthTrack, type Phase } from "./health-types";
import { initialHealth } from "./transition";
import { isAdminPhase } from "./weight-factor";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown, fallback: number): number => (typeof v === "number" && Number.isFinite(v) ? v : fallback);
const numOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

function parsePhase(v: unknown): Phase | null {
  if (!isRecord(v) || typeof v.state !== "string" || !(HEALTH_STATES as readonly string[]).includes(v.state)) return null;
  switch (v.state) {
    case "healthy":
    case "degraded":
      return { state: v.state };
    case "cooldown": {
      const since = numOrNull(v.since);
      const until = numOrNull(v.until);
      const durationMs = numOrNull(v.durationMs);
      return since === null || until === null || durationMs === null ? null : { state: "cooldown", since, until, durationMs };
    }
    case "probation": {
      const stageSince = numOrNull(v.stageSince);
      if (stageSince === null) return null;
      const phase = { state: "probation" as const, stage: num(v.stage, 0), stageSince, stagePasses: num(v.stagePasses, 0) };
      return isRecord(v.newLine) ? { ...phase, newLine: { passed: strings(v.newLine.passed) } } : phase;
    }
    case "unprobed":
      return { state: "unprobed" };
    case "drained":
    case "disabled": {
      const resume = parsePhase(v.resume);
      return resume === null || isAdminPhase(resume) ? null : { state: v.state, resume };
    }
    default:
      return null;
  }
}

function numbers(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (isRecord(v)) for (const [k, x] of Object.entries(v)) if (typeof x === "number" && Number.isFinite(x)) out[k] = x;
  return out;
}

function parseEvidence(v: unknown, fresh: Evidence): Evidence {
  if (!isRecord(v)) return fresh;
  return {
    hard: Math.max(0, num(v.hard, 0)),
    content: Math.max(0, num(v.content, 0)),
    sampleContent: numbers(v.sampleContent),
    hardRate: num(v.hardRate, fresh.hardRate),
    contentRate: numbers(v.contentRate),
    contentBase: numbers(v.contentBase),
    recentContent: numbers(v.recentContent),
    checked: numbers(v.checked),
    failing: strings(v.failing),
  };
}

/** One sample's stored length track; null when there is none. */
export function parseLengthTrack(t: unknown): LengthTrack | null {
  if (!isRecord(t)) return null;
  return { anchor: numOrNull(t.anchor), anchorN: Math.max(0, num(t.anchorN, 0)), recent: numOrNull(t.recent) };
}

function parseLengths(v: unknown): Record<string, LengthTrack> {
  const out: Record<string, LengthTrack> = {};
  if (!isRecord(v)) return out;
  for (const [k, t] of Object.entries(v)) {
    const track = parseLengthTrack(t);
    if (track) out[k] = track;
  }
  return out;
}

/** The stored record as a Health; null when it cannot be read at all (the caller starts the line over). */
export function parseHealth(stored: unknown): Health | null {
  if (!isRecord(stored)) return null;
  const phase = parsePhase(stored.phase);
  if (phase === null) return null;
  const fresh = initialHealth(num(stored.since, 0));
  const reprobe = isRecord(stored.reprobe) ? stored.reprobe : null;
  return {
    ...fresh,
    phase,
    factor: Math.min(1, Math.max(0, num(stored.factor, 1))),
    holdUntil: numOrNull(stored.holdUntil),
    lineScore: numOrNull(stored.lineScore),
    failStreak: strings(stored.failStreak),
    passStreak: strings(stored.passStreak),
    evidence: parseEvidence(stored.evidence, fresh.evidence),
    lengths: parseLengths(stored.lengths),
    cooldowns: Array.isArray(stored.cooldowns)
      ? stored.cooldowns.filter((t): t is number => typeof t === "number" && Number.isFinite(t))
      : [],
    lastCooldownMs: numOrNull(stored.lastCooldownMs),
    doubledAt: numOrNull(stored.doubledAt),
    trend: Array.isArray(stored.trend)
      ? stored.trend.flatMap((p) =>
          isRecord(p) && typeof p.probeId === "string" && numOrNull(p.at) !== null && numOrNull(p.score) !== null
            ? [{ at: p.at as number, score: p.score as number, probeId: p.probeId }]
            : [],
        )
      : [],
    fastProbeUntil: numOrNull(stored.fastProbeUntil),
    liveSuspectSince: numOrNull(stored.liveSuspectSince),
    fingerprints: parseFingerprintTracks(stored.fingerprints),
    usage: parseUsageTracks(stored.usage),
    shape: parseShapeTrack(stored.shape),
    reprobe:
      reprobe && typeof reprobe.sampleId === "string" && typeof reprobe.probeId === "string" && numOrNull(reprobe.at) !== null
        ? { at: reprobe.at as number, sampleId: reprobe.sampleId, probeId: reprobe.probeId }
        : null,
  };
}
