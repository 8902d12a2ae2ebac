import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request a receiver got, as it got it. */
export interface Received {
  /** Real time it arrived (ms). */
  at: number;
  headers: Record<string, string>;
  body: string;
  /** What it answered (null: it never answered). */
  status: number | null;
}

/** What the receiver does with a request: answer with a status (after `delayMs`), or hang (never answer). */
export type Respond = (req: {
  headers: Record<string, string>;
  body: string;
  n: number;
}) => number | "hang" | { status: number; delayMs: number };

export interface WebhookReceiver {
  url: string;
  received: Received[];
  /** Bodies of the requests it answered 2xx, parsed. */
  delivered(): { headers: Record<string, string>; json: Record<string, unknown> }[];
  respond(fn: Respond): void;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1:0 that records every request. */
export async function startWebhookReceiver(respond: Respond = () => 200): Promise<WebhookReceiver> {
  let answer = respond;
  const received: Received[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : (v ?? "")]));
      const body = Buffer.concat(chunks).toString("utf8");
      const entry: Received = { at: Date.now(), headers, body, status: null };
      received.push(entry);
      const status = answer({ headers, body, n: received.length });
      if (status === "hang") {
        hanging.add(res);
        res.on("close", () => hanging.delete(res));
        return;
      }
      const { code, delayMs } =
        typeof status === "number" ? { code: status, delayMs: 0 } : { code: status.status, delayMs: status.delayMs };
      setTimeout(() => {
        entry.status = code;
        res.writeHead(code, { "content-type": "text/plain" }).end(code >= 300 ? `receiver says ${code}` : "ok");
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    delivered: () =>
      received
        .filter((r) => r.status !== null && r.status >= 200 && r.status < 300)
        .map((r) => ({ headers: r.headers, json: JSON.parse(r.body) as Record<string, unknown> })),
    respond: (fn) => {
      answer = fn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
