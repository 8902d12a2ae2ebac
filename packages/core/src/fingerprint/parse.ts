// Fingerprint tracks as stored (part of health's JSON) → typed, once, where a row enters the
// program; anything unreadable is dropped (the sample starts its anchor over), never a crash.
import { ANSWERS_MAX, type AnswerAnchor } from "./anchor";
import { type FingerprintTrack, type FingerprintVariant, RECENT_ANSWERS } from "./track";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

function parseAnchor(v: unknown): AnswerAnchor {
  if (!isRecord(v) || !isRecord(v.shares)) return { shares: {}, n: 0 };
  const shares: Record<string, number> = {};
  for (const [k, s] of Object.entries(v.shares)) if (finite(s) && s > 0 && s <= 1) shares[k] = s;
  const n = finite(v.n) ? Math.min(ANSWERS_MAX, Math.max(0, Math.floor(v.n))) : 0;
  return { shares, n: Object.keys(shares).length === 0 ? 0 : n };
}

function parseVariant(v: unknown): FingerprintVariant | null {
  if (!isRecord(v)) return null;
  const recent = Array.isArray(v.recent) ? v.recent.filter((a): a is string => typeof a === "string").slice(-RECENT_ANSWERS) : [];
  return { anchor: parseAnchor(v.anchor), recent };
}

export function parseFingerprintTrack(v: unknown): FingerprintTrack | null {
  if (!isRecord(v)) return null;
  const variants: Record<string, FingerprintVariant> = {};
  if (isRecord(v.variants))
    for (const [k, x] of Object.entries(v.variants)) {
      const variant = parseVariant(x);
      if (variant) variants[k] = variant;
    }
  const threshold = finite(v.threshold) && v.threshold > 0 ? v.threshold : 1;
  const stat = (x: unknown) => (finite(x) ? Math.max(0, x) : 0);
  return { own: stat(v.own), peers: stat(v.peers), threshold, variants };
}

/** Health's `fingerprints`: per sample its track. */
export function parseFingerprintTracks(v: unknown): Record<string, FingerprintTrack> {
  const out: Record<string, FingerprintTrack> = {};
  if (!isRecord(v)) return out;
  for (const [k, x] of Object.entries(v)) {
    const t = parseFingerprintTrack(x);
    if (t) out[k] = t;
  }
  return out;
}
