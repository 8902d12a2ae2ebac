// A stand-in for the control plane's router-facing API (docs/api.md tables): ETag = version,
// If-None-Match → 304, ?waitSec long-poll, router-scoped credentials, and a switchable outage.
// Used by the router-client and router tests until (and beside) the real control plane.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { RouteTable, TableLine, TableMode } from "@linewatch/router-client";

export interface TableServerOptions {
  /** Sees lines with apiKey and headers. */
  routerToken?: string;
  /** Sees lines without credentials. */
  viewerToken?: string;
}

export interface LoggedRequest {
  path: string;
  ifNoneMatch: string | null;
  waitSec: number | null;
  authorization: string | null;
  at: number;
}

export type Outage = "up" | "reset" | "503";

export interface TableServer {
  url: string;
  port: number;
  requests: LoggedRequest[];
  /** Publishes the next version of a route's table; returns it. */
  publish(route: string, lines: TableLine[], mode?: TableMode): RouteTable;
  /** Sets a table as is (any version). */
  setTable(table: RouteTable): void;
  removeRoute(route: string): void;
  table(route: string): RouteTable | undefined;
  /** "reset": every connection is destroyed; "503": answers 503 with the error envelope. */
  setOutage(outage: Outage): void;
  /** Answers for a route are this raw body with status 200 until called with undefined (to test validation). */
  serveRaw(route: string, body: unknown): void;
  close(): Promise<void>;
}

export function line(name: string, weight: number, extra: Partial<TableLine> = {}): TableLine {
  return {
    id: `id-${name}`,
    name,
    tier: "paid",
    state: "healthy",
    weight,
    protocol: "openai-chat",
    baseUrl: `http://127.0.0.1:9/${name}/v1`,
    model: `${name}-model`,
    apiKey: `sk-${name}`,
    headers: {},
    ...extra,
  };
}

const stripCredentials = (t: RouteTable): RouteTable => ({
  ...t,
  lines: t.lines.map(({ apiKey: _a, headers: _h, ...rest }) => rest),
});

export async function startTableServer(options: TableServerOptions = {}): Promise<TableServer> {
  const tables = new Map<string, RouteTable>();
  const raw = new Map<string, unknown>();
  const waiters = new Set<() => void>();
  const requests: LoggedRequest[] = [];
  let outage: Outage = "up";

  const notify = (): void => {
    for (const w of [...waiters]) w();
  };

  const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
    res.end(text);
  };
  const sendError = (res: ServerResponse, status: number, code: string, message: string): void =>
    sendJson(res, status, { error: { code, message, details: [] } });

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? "/", "http://x");
    const waitRaw = url.searchParams.get("waitSec");
    requests.push({
      path: url.pathname,
      ifNoneMatch: req.headers["if-none-match"] ?? null,
      waitSec: waitRaw === null ? null : Number(waitRaw),
      authorization: req.headers.authorization ?? null,
      at: Date.now(),
    });
    if (outage === "reset") {
      req.socket.destroy();
      return;
    }
    if (outage === "503") {
      sendError(res, 503, "unavailable", "down for the test");
      return;
    }

    let withCredentials = false;
    if (options.routerToken !== undefined || options.viewerToken !== undefined) {
      const auth = req.headers.authorization ?? "";
      if (options.routerToken !== undefined && auth === `Bearer ${options.routerToken}`) withCredentials = true;
      else if (options.viewerToken === undefined || auth !== `Bearer ${options.viewerToken}`) {
        sendError(res, 401, "unauthorized", "missing or unknown token");
        return;
      }
    }
    const view = (t: RouteTable): RouteTable => (withCredentials ? t : stripCredentials(t));

    if (req.method !== "GET") {
      sendError(res, 404, "not_found", "no such path");
      return;
    }
    if (url.pathname === "/v1/tables") {
      sendJson(res, 200, { tables: [...tables.values()].map(view) });
      return;
    }
    const m = /^\/v1\/tables\/([^/]+)$/.exec(url.pathname);
    if (!m) {
      sendError(res, 404, "not_found", "no such path");
      return;
    }
    const route = decodeURIComponent(m[1] as string);
    if (raw.has(route)) {
      sendJson(res, 200, raw.get(route));
      return;
    }

    const answer = (): void => {
      const t = tables.get(route);
      if (t === undefined) {
        sendError(res, 404, "not_found", `route ${route} not found`);
        return;
      }
      const etag = `"${t.version}"`;
      if (req.headers["if-none-match"] === etag) {
        res.writeHead(304, { etag });
        res.end();
        return;
      }
      sendJson(res, 200, view(t), { etag });
    };
    const current = tables.get(route);
    const waitSec = Math.min(60, Number(waitRaw ?? 0));
    if (current !== undefined && req.headers["if-none-match"] === `"${current.version}"` && waitSec > 0) {
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(onChange);
        res.off("close", done);
      };
      const onChange = (): void => {
        const t = tables.get(route);
        if (t?.version === current.version && outage === "up") return;
        done();
        if (outage === "reset") req.socket.destroy();
        else if (outage === "503") sendError(res, 503, "unavailable", "down for the test");
        else answer();
      };
      const timer = setTimeout(() => {
        done();
        answer();
      }, waitSec * 1000);
      waiters.add(onChange);
      res.on("close", done);
      return;
    }
    answer();
  };

  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    publish(route, lines, mode = "normal") {
      const prev = tables.get(route);
      const table: RouteTable = {
        route,
        version: (prev?.version ?? 0) + 1,
        generatedAt: new Date().toISOString(),
        mode,
        lines,
      };
      tables.set(route, table);
      notify();
      return table;
    },
    setTable(table) {
      tables.set(table.route, table);
      notify();
    },
    removeRoute(route) {
      tables.delete(route);
      notify();
    },
    table: (route) => tables.get(route),
    setOutage(next) {
      outage = next;
      notify();
    },
    serveRaw(route, body) {
      if (body === undefined) raw.delete(route);
      else raw.set(route, body);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `cond` until it holds or `timeoutMs` passes. */
export async function waitFor(cond: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
