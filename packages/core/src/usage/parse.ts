// Usage tracks as stored (part of health's JSON) → typed; anything unreadable starts over.
import { type TokenAnchor, USAGE_RECENT, USAGE_WARMUP, type UsageTrack } from "./usage";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

const count = (v: unknown): number | null => (finite(v) && v >= 0 ? v : null);

function parseTokenAnchor(v: unknown): TokenAnchor {
  if (!isRecord(v)) return { anchor: null, n: 0, recent: [] };
  const anchor = count(v.anchor);
  const n = anchor !== null && finite(v.n) ? Math.min(USAGE_WARMUP + 1, Math.max(0, Math.floor(v.n))) : 0;
  const recent = Array.isArray(v.recent) ? v.recent.filter((x): x is number => finite(x) && x >= 0).slice(-USAGE_RECENT) : [];
  return { anchor, n, recent };
}

/** Prompt tokens: with the fewest anchored (a track stored before it existed holds to its mean). */
function parsePromptAnchor(v: unknown): TokenAnchor {
  const a = parseTokenAnchor(v);
  const low = isRecord(v) ? count(v.low) : null;
  return a.anchor !== null && low !== null ? { ...a, low } : a;
}

/** Tokens per character: a ratio stored without its mean characters (a mean of ratios, before) starts over. */
function parseRatioAnchor(v: unknown): TokenAnchor {
  const a = parseTokenAnchor(v);
  const chars = isRecord(v) ? count(v.chars) : null;
  if (a.anchor === null || chars === null || chars === 0) return { anchor: null, n: 0, recent: a.recent };
  return { ...a, chars };
}

export function parseUsageTrack(v: unknown): UsageTrack | null {
  if (!isRecord(v)) return null;
  const prompt: Record<string, TokenAnchor> = {};
  if (isRecord(v.prompt)) for (const [k, x] of Object.entries(v.prompt)) prompt[k] = parsePromptAnchor(x);
  const track: UsageTrack = { prompt, ratio: parseRatioAnchor(v.ratio) };
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
