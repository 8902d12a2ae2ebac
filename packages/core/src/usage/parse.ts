// Usage tracks as stored (part of health's JSON) → typed; anything unreadable starts over.
import { type TokenAnchor, USAGE_RECENT, USAGE_WARMUP, type UsageTrack } from "./usage";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

function parseTokenAnchor(v: unknown): TokenAnchor {
  if (!isRecord(v)) return { anchor: null, n: 0, recent: [] };
  const anchor = finite(v.anchor) && v.anchor >= 0 ? v.anchor : null;
  const n = anchor !== null && finite(v.n) ? Math.min(USAGE_WARMUP + 1, Math.max(0, Math.floor(v.n))) : 0;
  const recent = Array.isArray(v.recent) ? v.recent.filter((x): x is number => finite(x) && x >= 0).slice(-USAGE_RECENT) : [];
  return { anchor, n, recent };
}

export function parseUsageTrack(v: unknown): UsageTrack | null {
  if (!isRecord(v)) return null;
  const prompt: Record<string, TokenAnchor> = {};
  if (isRecord(v.prompt)) for (const [k, x] of Object.entries(v.prompt)) prompt[k] = parseTokenAnchor(x);
  const track: UsageTrack = { prompt, ratio: parseTokenAnchor(v.ratio) };
  if (typeof v.failing === "string") track.failing = v.failing;
  return track;
}

/** Health's `usage`: per sample its track. */
export function parseUsageTracks(v: unknown): Record<string, UsageTrack> {
  const out: Record<string, UsageTrack> = {};
  if (!isRecord(v)) return out;
  for (const [k, x] of Object.entries(v)) {
    const t = parseUsageTrack(x);
    if (t) out[k] = t;
  }
  return out;
}
