// Reading an event stream's bytes as they pass, without decoding or JSON.parse (that cost twice the
// CPU of proxying the stream): complete lines are scanned for a few quote-led JSON keys, and only a
// partial line is ever held. JSON escapes quotes inside strings, so a key like `"type":` in the raw
// bytes is always structure, never text a model wrote.
import type { AnswerVerdict } from "./answer-verdict";

export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
export const NEWLINE = 0x0a;

/** The longest partial SSE line (or non-streamed body) kept for the check; beyond it the check gives up and says `ok`. */
export const MAX_KEPT = 4 * 1024 * 1024;

export const skipSpaces = (b: Buffer, i: number, end: number): number => {
  while (i < end && (b[i] === 0x20 || b[i] === 0x09)) i++;
  return i;
};

/** Characters of a JSON string's raw bytes from `i` to its closing quote (UTF-8 continuation bytes and escapes not counted). */
export function stringChars(b: Buffer, i: number, end: number): number {
  let n = 0;
  for (; i < end; i++) {
    const c = b[i] as number;
    if (c === QUOTE) return n;
    if (c === BACKSLASH) {
      i++; // the escaped character counts once (a \uXXXX escape counts its digits: a close enough estimate)
      n++;
    } else if ((c & 0xc0) !== 0x80) n++;
  }
  return n;
}

/** Characters of every string value of `key` in [from, end). */
export function keyStringChars(b: Buffer, key: Buffer, from: number, end: number): number {
  let n = 0;
  for (let i = b.indexOf(key, from); i !== -1 && i < end; i = b.indexOf(key, i + key.length)) {
    const v = skipSpaces(b, i + key.length, end);
    if (b[v] === QUOTE) n += stringChars(b, v + 1, end);
  }
  return n;
}

/** The string value after `key` at `i` (latin1; for short enum values), or null when it is not a string. */
export function stringAt(b: Buffer, key: Buffer, i: number, end: number): string | null {
  const v = skipSpaces(b, i + key.length, end);
  if (b[v] !== QUOTE) return null;
  const close = b.indexOf(QUOTE, v + 1);
  return close !== -1 && close < end ? b.toString("latin1", v + 1, close) : null;
}

/** Whether the string value after `key` at `i` is exactly `quoted` (the value with its quotes), without decoding it. */
export function valueIs(b: Buffer, key: Buffer, i: number, end: number, quoted: Buffer): boolean {
  const v = skipSpaces(b, i + key.length, end);
  return v + quoted.length <= end && b.compare(quoted, 0, quoted.length, v, v + quoted.length) === 0;
}

/** Whether the string value after `key` at `i` ends with `suffix` (the closing quote included). */
export function valueEndsWith(b: Buffer, key: Buffer, i: number, end: number, suffix: Buffer): boolean {
  const v = skipSpaces(b, i + key.length, end);
  if (b[v] !== QUOTE) return false;
  const close = b.indexOf(QUOTE, v + 1);
  if (close === -1 || close >= end) return false;
  const from = close + 1 - suffix.length;
  return from > v && b.compare(suffix, 0, suffix.length, from, close + 1) === 0;
}

/** The integer after `key` at `i`, or null. */
export function integerAt(b: Buffer, key: Buffer, i: number, end: number): number | null {
  let v = skipSpaces(b, i + key.length, end);
  let n = 0;
  let digits = 0;
  for (; v < end; v++, digits++) {
    const c = b[v] as number;
    if (c < 0x30 || c > 0x39) break;
    n = n * 10 + (c - 0x30);
  }
  return digits === 0 ? null : n;
}

/** The last integer value of `key` in [from, end), or null when there is none. */
export function lastInteger(b: Buffer, key: Buffer, from: number, end: number): number | null {
  let found: number | null = null;
  for (let i = b.indexOf(key, from); i !== -1 && i < end; i = b.indexOf(key, i + key.length)) {
    const n = integerAt(b, key, i, end);
    if (n !== null) found = n;
  }
  return found;
}

/** The line of `b` that holds byte `i`, within [from, end): [start, stop). */
export function lineAround(b: Buffer, i: number, from: number, end: number): [number, number] {
  const before = b.lastIndexOf(NEWLINE, i);
  const after = b.indexOf(NEWLINE, i);
  return [before < from ? from : before + 1, after === -1 || after > end ? end : after];
}

/**
 * An event stream, chunk by chunk: complete lines go to `scan`, a partial line is kept (a copy: the
 * chunk's memory belongs to the HTTP client) until its end arrives; `end(complete)` says how the
 * stream ended. One subclass per protocol.
 */
export abstract class SseScan {
  private partial: Buffer | null = null;
  protected gaveUp = false;

  push(chunk: Buffer): void {
    if (this.gaveUp) return;
    const b = this.partial === null ? chunk : Buffer.concat([this.partial, chunk]);
    const last = b.lastIndexOf(NEWLINE);
    if (last === -1) {
      this.keep(b, 0);
      return;
    }
    this.scan(b, 0, last);
    if (last + 1 < b.length) this.keep(b, last + 1);
    else this.partial = null;
  }

  private keep(b: Buffer, from: number): void {
    if (b.length - from > MAX_KEPT) {
      this.gaveUp = true;
      this.partial = null;
      return;
    }
    this.partial = Buffer.from(b.subarray(from));
  }

  /** Scans what is left of a stream that ended without a final newline. */
  protected flush(): void {
    if (this.partial === null) return;
    const b = this.partial;
    this.partial = null;
    this.scan(b, 0, b.length);
  }

  /** Complete lines in [from, end). */
  protected abstract scan(b: Buffer, from: number, end: number): void;

  /** `complete`: the upstream ended the body cleanly (not cut off by a broken connection). */
  abstract end(complete: boolean): AnswerVerdict;
}
