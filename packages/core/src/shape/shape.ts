// The protocol shape of a line's answers (docs/scoring.md#what-a-relay-can-fake): the format of
// the answer's id ("chatcmpl-" and 29 letters and digits) and which fields the body carries
// (system_fingerprint, usage details, logprobs, ...), values ignored. A relay that swaps the
// backend often changes it. Learned per line while it is healthy at full weight; a change is an
// event and asks for faster probing, and it weighs in a decision only through the fingerprint
// test's threshold (sequential.ts, SHAPE_BONUS): never by itself.

/** What the shell reads off an answer for its shape (the adapter's parsed id and body). */
export interface ShapeObservation {
  /** The answer's id (`id` of a chat completion, a message, a response); null when it has none. */
  id: string | null;
  /** The body's field paths (bodyFields of the parsed body, or the adapter's own list). */
  fields: readonly string[];
}

export interface ShapeTrack {
  /** Signature → share, learned while the line is healthy at full weight (plain mean up to SHAPE_MAX, then 1/SHAPE_MAX). */
  shares: Record<string, number>;
  n: number;
  /** Answers in a row whose signature the line does not usually send. */
  strangers: number;
  /** The latest change: when it was seen and to what signature; null: none yet. */
  changedAt: number | null;
  changedTo: string | null;
}

export interface ShapeChange {
  /** The signature the line usually sends (the most common one). */
  from: string;
  to: string;
  detail: string;
}

/** Answers before a shape is judged at all, and the cap of the plain mean. */
export const SHAPE_WARMUP = 20;
export const SHAPE_MAX = 500;
/** A signature the line sends at least this often is one of its own. */
export const SHAPE_KNOWN_SHARE = 0.05;
/** Strange signatures in a row that make a change. */
export const SHAPE_CHANGE_RUN = 3;
/** A change counts as recent (it lowers the fingerprint threshold) for this long. */
export const SHAPE_RECENT_MS = 60 * 60_000;
/** Depth of the field paths kept, and how many. */
const FIELD_DEPTH = 4;
const MAX_FIELDS = 64;
/** Objects under these keys hold free-form data (tool arguments, metadata), not the protocol's shape. */
const OPAQUE_KEYS = new Set(["arguments", "input", "metadata", "parameters"]);

export const emptyShapeTrack = (): ShapeTrack => ({ shares: {}, n: 0, strangers: 0, changedAt: null, changedTo: null });

/**
 * The id's format: its prefix ("chatcmpl-", "msg_", "resp_") and what follows, as a class and length:
 * `chatcmpl-{an29}`, `msg_{an24}`, `{uuid}`, `{hex32}`; `none` without an id.
 */
export function idFormat(id: string | null): string {
  if (id === null || id === "") return "none";
  const m = /^([A-Za-z]+(?:[-_][A-Za-z]+)*[-_])(.*)$/.exec(id);
  const prefix = m ? (m[1] as string) : "";
  const rest = m ? (m[2] as string) : id;
  let kind: string;
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(rest)) kind = "uuid";
  else if (/^[0-9]+$/.test(rest)) kind = `digits${rest.length}`;
  else if (/^[0-9a-f]+$/.test(rest)) kind = `hex${rest.length}`;
  else if (/^[A-Za-z0-9]+$/.test(rest)) kind = `an${rest.length}`;
  else kind = `other${rest.length}`;
  return `${prefix}{${kind}}`;
}

/** The field paths of a parsed body ("choices[].message.role", "usage.prompt_tokens_details"), sorted; values ignored. */
export function bodyFields(json: unknown): string[] {
  const out = new Set<string>();
  const walk = (v: unknown, path: string, depth: number) => {
    if (out.size >= MAX_FIELDS || depth > FIELD_DEPTH) return;
    if (Array.isArray(v)) {
      if (v.length > 0) walk(v[0], `${path}[]`, depth);
      return;
    }
    if (typeof v !== "object" || v === null) return;
    for (const [k, child] of Object.entries(v)) {
      const p = path === "" ? k : `${path}.${k}`;
      out.add(p);
      if (!OPAQUE_KEYS.has(k)) walk(child, p, depth + 1);
    }
  };
  walk(json, "", 0);
  return [...out].sort();
}

/** One string for the shape: the id's format and the field paths. */
export function shapeSignature(obs: ShapeObservation): string {
  const fields = [...new Set(obs.fields)].sort().slice(0, MAX_FIELDS);
  return `${idFormat(obs.id)} ${fields.join(",")}`;
}

/** The signature the line usually sends (its most common one); null while it has none. */
export function usualShape(t: ShapeTrack): string | null {
  let best: [string, number] | null = null;
  for (const [k, s] of Object.entries(t.shares)) if (best === null || s > best[1]) best = [k, s];
  return best?.[0] ?? null;
}

/**
 * The track after one answer's signature, and the change it completes, if any: SHAPE_CHANGE_RUN
 * answers in a row whose signatures the line does not usually send (each a share under
 * SHAPE_KNOWN_SHARE), once the track has SHAPE_WARMUP answers. A change to the signature already
 * reported is not reported again, and from then on it is learned like the others. `learn`: the line
 * is healthy at full weight. Pure.
 */
export function stepShape(
  t: ShapeTrack | undefined,
  signature: string,
  learn: boolean,
  now: number,
): { track: ShapeTrack; change: ShapeChange | null } {
  const cur = t ?? emptyShapeTrack();
  const known = (cur.shares[signature] ?? 0) >= SHAPE_KNOWN_SHARE;
  const judged = cur.n >= SHAPE_WARMUP;
  const strangers = judged && !known ? cur.strangers + 1 : 0;
  let next: ShapeTrack = { ...cur, strangers };
  // A strange signature is learned only once it was reported as a change (or while the track is
  // young): learned at once, three of them would look usual to a young track before they made one.
  if (learn && (known || !judged || cur.changedTo === signature)) {
    const n = Math.min(SHAPE_MAX, cur.n + 1);
    const shares: Record<string, number> = {};
    for (const [k, s] of Object.entries(cur.shares)) if (s * (1 - 1 / n) > 1e-4) shares[k] = Number((s * (1 - 1 / n)).toPrecision(6));
    shares[signature] = Number(((shares[signature] ?? 0) + 1 / n).toPrecision(6));
    next = { ...next, shares, n };
  }
  if (strangers < SHAPE_CHANGE_RUN || cur.changedTo === signature) return { track: next, change: null };
  const from = usualShape(cur) ?? "none";
  next = { ...next, strangers: 0, changedAt: now, changedTo: signature };
  return { track: next, change: { from, to: signature, detail: describeShapeChange(from, signature) } };
}

/** The answers' shape changed within SHAPE_RECENT_MS of `now`. */
export const shapeChangedRecently = (t: ShapeTrack | null | undefined, now: number): boolean =>
  t?.changedAt !== null && t?.changedAt !== undefined && now - t.changedAt < SHAPE_RECENT_MS;

/** "id chatcmpl-{an29} → {uuid}; fields gone: system_fingerprint; new: x_request_id". */
export function describeShapeChange(from: string, to: string): string {
  const [fromId = "", fromFields = ""] = from.split(" ");
  const [toId = "", toFields = ""] = to.split(" ");
  const a = new Set(fromFields.split(",").filter(Boolean));
  const b = new Set(toFields.split(",").filter(Boolean));
  const gone = [...a].filter((f) => !b.has(f));
  const added = [...b].filter((f) => !a.has(f));
  const parts: string[] = [];
  if (fromId !== toId) parts.push(`id ${fromId} → ${toId}`);
  if (gone.length > 0) parts.push(`fields gone: ${gone.join(", ")}`);
  if (added.length > 0) parts.push(`new fields: ${added.join(", ")}`);
  return `the answers' protocol shape changed (${parts.join("; ") || "same fields"})`;
}

/** Health's `shape` as stored → typed; null (start over) when unreadable. */
export function parseShapeTrack(r: unknown): ShapeTrack | null {
  if (typeof r !== "object" || r === null || Array.isArray(r)) return null;
  const finite = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);
  const shares: Record<string, number> = {};
  if ("shares" in r && typeof r.shares === "object" && r.shares !== null)
    for (const [k, s] of Object.entries(r.shares)) if (finite(s) && s > 0 && s <= 1) shares[k] = s;
  const n = "n" in r && finite(r.n) ? Math.min(SHAPE_MAX, Math.max(0, Math.floor(r.n))) : 0;
  const strangers = "strangers" in r && finite(r.strangers) ? Math.max(0, Math.floor(r.strangers)) : 0;
  const changedAt = "changedAt" in r && finite(r.changedAt) ? r.changedAt : null;
  const changedTo = "changedTo" in r && typeof r.changedTo === "string" ? r.changedTo : null;
  return { shares, n, strangers, changedAt, changedTo };
}
