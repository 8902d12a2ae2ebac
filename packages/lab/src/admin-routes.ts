// The lab's own control surface under /__lab: switch modes, read counters, add lines.
//   GET  /__lab/lines                  every line: name, baseUrl, mode
//   POST /__lab/lines                  add a line (LineOptions) → 201
//   GET  /__lab/lines/<name>           mode and counters
//   GET|POST /__lab/lines/<name>/mode  read or set the mode: {"mode": "...", ...params}
//   GET|POST /__lab/mode, GET /__lab/line   the same for the lab's default line
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody, sendJson } from "./http-util";
import { LabError, type LineOptions, type VirtualLine } from "./line";
import { parseModeRequest } from "./modes";
import { errorBody } from "./openai";

export interface AdminContext {
  line(name: string): VirtualLine | undefined;
  lineNames(): string[];
  defaultLine: string | null;
  baseUrl(name: string): string;
  addLine(options: LineOptions): VirtualLine;
}

/** `segments` follow `__lab`. */
export async function handleAdminRequest(ctx: AdminContext, segments: string[], req: IncomingMessage, res: ServerResponse): Promise<void> {
  const [first, name, third, ...extra] = segments;
  if (first === "lines" && name === undefined) {
    if (req.method === "GET") {
      const lines = ctx.lineNames().map((n) => ({ name: n, baseUrl: ctx.baseUrl(n), mode: ctx.line(n)?.stats().mode }));
      sendJson(res, 200, { lines });
      return;
    }
    if (req.method === "POST") return addLine(ctx, req, res);
    return notAllowed(res, "GET, POST");
  }
  if (first === "lines" && name !== undefined && extra.length === 0 && (third === undefined || third === "mode")) {
    const line = ctx.line(name);
    if (!line) return notFound(res, `no line named ${JSON.stringify(name)}`);
    return third === undefined ? lineStatus(ctx, line, req, res) : mode(line, req, res);
  }
  if ((first === "mode" || first === "line") && name === undefined) {
    const line = ctx.defaultLine === null ? undefined : ctx.line(ctx.defaultLine);
    if (!line) return notFound(res, "this lab has no default line; use /__lab/lines/<name>");
    return first === "mode" ? mode(line, req, res) : lineStatus(ctx, line, req, res);
  }
  notFound(res, `unknown lab path /__lab/${segments.join("/")}`);
}

function lineStatus(ctx: AdminContext, line: VirtualLine, req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== "GET") {
    notAllowed(res, "GET");
    return;
  }
  sendJson(res, 200, { ...line.stats(), baseUrl: ctx.baseUrl(line.name) });
}

async function mode(line: VirtualLine, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === "GET") {
    const { name, mode: current, setting } = line.stats();
    sendJson(res, 200, { name, mode: current, setting });
    return;
  }
  if (req.method !== "POST") return notAllowed(res, "GET, POST");
  const body = await readJson(req, res);
  if (body === undefined) return;
  const parsed = parseModeRequest(body);
  if (!parsed.ok) return badRequest(res, parsed.error);
  line.setMode(parsed.value);
  sendJson(res, 200, { name: line.name, mode: parsed.value.mode, setting: parsed.value });
}

async function addLine(ctx: AdminContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJson(req, res);
  if (body === undefined) return;
  const options = parseLineOptions(body);
  if (typeof options === "string") return badRequest(res, options);
  if (ctx.line(options.name)) {
    sendJson(res, 409, errorBody(`a line named ${JSON.stringify(options.name)} exists`, "invalid_request_error", "conflict"));
    return;
  }
  let line: VirtualLine;
  try {
    line = ctx.addLine(options);
  } catch (error) {
    if (error instanceof LabError) return badRequest(res, error.message);
    throw error;
  }
  sendJson(res, 201, { name: line.name, baseUrl: ctx.baseUrl(line.name), mode: line.stats().mode });
}

const OPTION_TYPES: Record<keyof LineOptions, (value: unknown) => boolean> = {
  name: (v) => typeof v === "string",
  seed: (v) => typeof v === "string" || (typeof v === "number" && Number.isFinite(v)),
  apiKey: (v) => typeof v === "string" && v !== "",
  mode: (v) => typeof v === "string" || (typeof v === "object" && v !== null),
  baseLatencyMs: (v) => typeof v === "number",
  latencyJitterMs: (v) => typeof v === "number",
  model: (v) => typeof v === "string" && v !== "",
  streamChunkDelayMs: (v) => typeof v === "number",
};

/** Shape checks here; value checks (name pattern, ranges, modes) happen where the line is built. */
function parseLineOptions(body: unknown): LineOptions | string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "body must be a JSON object of line options";
  const record = body as Record<string, unknown>;
  if (record.name === undefined) return "name is required";
  for (const [key, value] of Object.entries(record)) {
    const check = OPTION_TYPES[key as keyof LineOptions];
    if (!check) return `unknown line option \`${key}\``;
    if (!check(value)) return `${key} has the wrong type: ${JSON.stringify(value)}`;
  }
  return record as unknown as LineOptions;
}

async function readJson(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const read = await readBody(req);
  if (!read.ok) {
    sendJson(res, 413, errorBody("Request body too large.", "invalid_request_error"));
    return undefined;
  }
  try {
    return JSON.parse(read.text) as unknown;
  } catch {
    // Bad input is the client's outcome: a 400, not our error.
    badRequest(res, "body is not valid JSON");
    return undefined;
  }
}

function badRequest(res: ServerResponse, message: string): void {
  sendJson(res, 400, errorBody(message, "invalid_request_error"));
}

function notFound(res: ServerResponse, message: string): void {
  sendJson(res, 404, errorBody(message, "invalid_request_error", "not_found"));
}

function notAllowed(res: ServerResponse, allow: string): void {
  sendJson(res, 405, errorBody(`method not allowed; use ${allow}`, "invalid_request_error"), { allow });
}
