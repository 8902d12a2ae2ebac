// Shared by the lab suites: the shipped samples, HTTP calls, a small check of `expect`.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SampleExpect } from "@linewatch/core";
import { parse } from "yaml";

export interface ShippedSample {
  name: string;
  request: Record<string, unknown>;
  expect: SampleExpect;
}

const PROBES = fileURLToPath(new URL("../../../probes/openai-chat", import.meta.url));

let loaded: Map<string, ShippedSample> | null = null;

/** The golden samples the product ships, read from probes/openai-chat (once). */
export function shippedSamples(): Map<string, ShippedSample> {
  if (loaded) return loaded;
  const out = new Map<string, ShippedSample>();
  for (const file of readdirSync(PROBES)
    .filter((f) => f.endsWith(".yaml"))
    .sort()) {
    const sample = parse(readFileSync(join(PROBES, file), "utf8")) as ShippedSample;
    out.set(sample.name, sample);
  }
  loaded = out;
  return out;
}

export function sample(name: string): ShippedSample {
  const found = shippedSamples().get(name);
  if (!found) throw new Error(`no shipped sample ${name}`);
  return found;
}

let nonceCounter = 0;
/** Nonces shaped like the prober's (`lw-` + hex), unique within a run. */
export function nextNonce(): string {
  nonceCounter += 1;
  return `lw-${(0x3f9a2c00 + nonceCounter * 7919).toString(16)}e1`;
}

/** The sample's request with {{nonce}} and {{now}} filled, plus a model, as the prober sends it. */
export function probeBody(s: ShippedSample, nonce: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const text = JSON.stringify(s.request).replaceAll("{{nonce}}", nonce).replaceAll("{{now}}", "2026-11-29T21:00:00.000Z");
  return { model: "gpt-lab", ...(JSON.parse(text) as Record<string, unknown>), ...extra };
}

export interface ChatResult {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  content: string;
}

export async function post(url: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(init.headers as Record<string, string> | undefined) },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: init.signal ?? null,
  });
}

export async function chat(baseUrl: string, body: unknown, init: RequestInit = {}): Promise<ChatResult> {
  const res = await post(`${baseUrl}/chat/completions`, body, init);
  const json = (await res.json()) as Record<string, unknown>;
  const choices = json.choices as { message: { content: string } }[] | undefined;
  return { status: res.status, headers: res.headers, body: json, content: choices?.[0]?.message.content ?? "" };
}

export interface StreamResult {
  status: number;
  contentType: string | null;
  events: unknown[];
  done: boolean;
  content: string;
}

/** Reads a whole SSE answer; `events` are the parsed `data:` payloads before `[DONE]`. */
export async function chatStream(baseUrl: string, body: Record<string, unknown>): Promise<StreamResult> {
  const res = await post(`${baseUrl}/chat/completions`, { ...body, stream: true });
  const text = await res.text();
  const events: unknown[] = [];
  let done = false;
  for (const block of text.split("\n\n")) {
    if (block === "") continue;
    if (!block.startsWith("data: ")) throw new Error(`not an SSE data line: ${block}`);
    const data = block.slice("data: ".length);
    if (data === "[DONE]") {
      done = true;
      continue;
    }
    if (done) throw new Error("an event after [DONE]");
    events.push(JSON.parse(data));
  }
  const content = events.map((e) => (e as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta?.content ?? "").join("");
  return { status: res.status, contentType: res.headers.get("content-type"), events, done, content };
}

/**
 * A small stand-in for the prober's scoring: which of the sample's expectations the answer
 * misses. Kept here on purpose, so these suites test the lab and not core's scoring.
 */
export function missedExpectations(expect: SampleExpect, result: ChatResult, nonce: string): string[] {
  const missed: string[] = [];
  const { content } = result;
  if (expect.minLength !== undefined && content.length < expect.minLength) missed.push(`minLength ${content.length}`);
  if (expect.maxLength !== undefined && content.length > expect.maxLength) missed.push(`maxLength ${content.length}`);
  for (const needle of expect.contains ?? []) {
    if (!content.toLowerCase().includes(needle.toLowerCase())) missed.push(`contains ${needle}`);
  }
  if (expect.matches !== undefined && !new RegExp(expect.matches).test(content)) missed.push("matches");
  if (expect.answer !== undefined && normalize(content) !== normalize(expect.answer)) missed.push(`answer ${content}`);
  if (expect.nonce && !content.includes(nonce)) missed.push("nonce");
  for (const path of expect.requiredFields ?? []) {
    const [root, rest] = path.startsWith("content.") ? [parseOrNull(content), path.slice("content.".length)] : [result.body, path];
    if (lookup(root, rest) === undefined) missed.push(`field ${path}`);
  }
  return missed;
}

function normalize(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // An answer that is not JSON simply has none of the content fields.
    return null;
  }
}

function lookup(root: unknown, path: string): unknown {
  let value = root;
  for (const key of path.split(".")) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
