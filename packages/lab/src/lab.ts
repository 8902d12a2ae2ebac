// A lab: one HTTP server on 127.0.0.1 hosting many virtual lines.
//   http://127.0.0.1:PORT/lines/<name>/v1/...   every line
//   http://127.0.0.1:PORT/v1/...                the default line, if the lab has one
//   http://127.0.0.1:PORT/__lab/...             control (admin-routes.ts)
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { handleAdminRequest } from "./admin-routes";
import { sendJson, Timers } from "./http-util";
import { LabError, type LineOptions, type LineStats, type RecordedRequest, VirtualLine } from "./line";
import { handleLineRequest } from "./line-routes";
import { type LabMode, type ModeParams, type ModeSetting, parseModeRequest } from "./modes";
import { errorBody } from "./openai";

export interface LabOptions {
  lines?: LineOptions[];
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** The line that also answers on the root paths `/v1/*` and `/__lab/mode`. */
  defaultLine?: string;
  /** For `created` timestamps; default Date.now. */
  clock?: () => number;
}

export interface Lab {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  /** `http://127.0.0.1:PORT/lines/<name>/v1`: what a linewatch line's `baseUrl` holds. */
  baseUrl(name: string): string;
  lineNames(): string[];
  /** Adds a line to the running lab and returns its base URL. */
  addLine(options: LineOptions): string;
  /** Throws LabError on an unknown line or an invalid mode or parameter. */
  setMode<M extends LabMode>(name: string, mode: M, params?: ModeParams<M>): ModeSetting;
  stats(name: string): LineStats;
  /** The last requests the line received (up to 32), oldest first: what a client actually sent. */
  requests(name: string): RecordedRequest[];
  /** Stops the server; ends hung and delayed requests at once. */
  close(): Promise<void>;
}

/** A lab serving one line on the root paths: `baseUrl` is `http://127.0.0.1:PORT/v1`. */
export interface LabLine {
  readonly lab: Lab;
  readonly name: string;
  readonly url: string;
  readonly baseUrl: string;
  setMode<M extends LabMode>(mode: M, params?: ModeParams<M>): ModeSetting;
  stats(): LineStats;
  requests(): RecordedRequest[];
  close(): Promise<void>;
}

export type LabLineOptions = Omit<LineOptions, "name"> & { name?: string } & Omit<LabOptions, "lines" | "defaultLine">;

export async function startLab(options: LabOptions = {}): Promise<Lab> {
  const lines = new Map<string, VirtualLine>();
  const addLine = (lineOptions: LineOptions): VirtualLine => {
    if (typeof lineOptions.name !== "string") throw new LabError("line name must be a string");
    if (lines.has(lineOptions.name)) throw new LabError(`a line named ${JSON.stringify(lineOptions.name)} exists`);
    const line = new VirtualLine(lineOptions);
    lines.set(line.name, line);
    return line;
  };
  for (const lineOptions of options.lines ?? []) addLine(lineOptions);
  const defaultLine = options.defaultLine ?? null;
  if (defaultLine !== null && !lines.has(defaultLine))
    throw new LabError(`defaultLine ${JSON.stringify(defaultLine)} is not one of the lines`);

  const clock = options.clock ?? Date.now;
  const timers = new Timers();
  let url = "";
  const baseUrl = (name: string) => `${url}/lines/${name}/v1`;
  const adminContext = { line: (name: string) => lines.get(name), lineNames: () => [...lines.keys()], defaultLine, baseUrl, addLine };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = req.url ?? "/";
    const query = raw.indexOf("?");
    const segments = (query === -1 ? raw : raw.slice(0, query)).split("/").filter((s) => s !== "");
    if (segments[0] === "lines" && segments[2] === "v1" && segments[1] !== undefined) {
      const line = lines.get(segments[1]);
      if (!line)
        return sendJson(
          res,
          404,
          errorBody(`No line named ${JSON.stringify(segments[1])} in this lab.`, "invalid_request_error", "not_found"),
        );
      return handleLineRequest({ clock, timers }, line, segments.slice(3).join("/"), req, res);
    }
    if (segments[0] === "v1") {
      const line = defaultLine === null ? undefined : lines.get(defaultLine);
      if (!line)
        return sendJson(res, 404, errorBody("This lab has no default line; use /lines/<name>/v1.", "invalid_request_error", "not_found"));
      return handleLineRequest({ clock, timers }, line, segments.slice(1).join("/"), req, res);
    }
    if (segments[0] === "__lab") return handleAdminRequest(adminContext, segments.slice(1), req, res);
    sendJson(res, 404, errorBody(`Unknown request URL: ${req.method} ${raw}.`, "invalid_request_error", "unknown_url"));
  };

  const server: Server = createServer({ keepAlive: true }, (req, res) => {
    route(req, res).catch((error: unknown) => {
      // A bug of the lab's own: say so loudly to the client rather than hang it.
      if (!res.headersSent) sendJson(res, 500, errorBody(`lab error: ${String(error)}`, "server_error"));
      else res.destroy();
    });
  });
  // Benchmarks reuse connections; Node's 5 s default would churn them between bursts.
  server.keepAliveTimeout = 30_000;
  server.headersTimeout = 35_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  url = `http://${host}:${address.port}`;

  const lineOrThrow = (name: string): VirtualLine => {
    const line = lines.get(name);
    if (!line) throw new LabError(`no line named ${JSON.stringify(name)}`);
    return line;
  };
  let closed: Promise<void> | null = null;

  return {
    url,
    baseUrl(name) {
      lineOrThrow(name);
      return baseUrl(name);
    },
    lineNames: () => [...lines.keys()],
    addLine: (lineOptions) => baseUrl(addLine(lineOptions).name),
    setMode(name, mode, params) {
      const line = lineOrThrow(name);
      const parsed = parseModeRequest({ ...params, mode });
      if (!parsed.ok) throw new LabError(parsed.error);
      line.setMode(parsed.value);
      return parsed.value;
    },
    stats: (name) => lineOrThrow(name).stats(),
    requests: (name) => lineOrThrow(name).requests(),
    close() {
      if (!closed) {
        timers.clear();
        closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
      }
      return closed;
    },
  };
}

export async function startLabLine(options: LabLineOptions = {}): Promise<LabLine> {
  const { host, port, clock, ...lineOptions } = options;
  const name = lineOptions.name ?? "line";
  const lab = await startLab({ lines: [{ ...lineOptions, name }], defaultLine: name, host, port, clock });
  return {
    lab,
    name,
    url: lab.url,
    baseUrl: `${lab.url}/v1`,
    setMode: (mode, params) => lab.setMode(name, mode, params),
    stats: () => lab.stats(name),
    requests: () => lab.requests(name),
    close: () => lab.close(),
  };
}
