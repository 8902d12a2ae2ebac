// The bare proxy on undici's dispatch API instead of node:http's Agent (A/B for the upstream client).
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, type Dispatcher } from "undici";

const base = new URL(process.env.UPSTREAM_BASE ?? "");
const prefix = base.pathname.replace(/\/+$/, "");
const key = process.env.UPSTREAM_KEY ?? "";
const model = process.env.UPSTREAM_MODEL ?? "lab-model";
const agent = new Agent({ keepAliveTimeout: 10_000 });
const HOP = new Set(["connection", "keep-alive", "transfer-encoding"]);

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    body.model = model;
    const payload = JSON.stringify(body);
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart() {},
      onResponseStart(_c, status, headers: IncomingHttpHeaders) {
        const out: IncomingHttpHeaders = {};
        for (const k in headers) if (!HOP.has(k)) out[k] = headers[k];
        res.writeHead(status, out as Record<string, string>);
      },
      onResponseData(_c, chunk) {
        res.write(chunk);
      },
      onResponseEnd() {
        res.end();
      },
      onResponseError() {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      },
    };
    agent.dispatch(
      {
        origin: base.origin,
        path: prefix + (req.url ?? "/").slice(3),
        method: "POST",
        headers: [
          "content-type",
          "application/json",
          "content-length",
          String(Buffer.byteLength(payload)),
          "accept",
          req.headers.accept ?? "application/json",
          "authorization",
          `Bearer ${key}`,
          ...(typeof req.headers["anthropic-version"] === "string" ? ["anthropic-version", req.headers["anthropic-version"]] : []),
        ],
        body: payload,
      },
      handler,
    );
  });
});
server.keepAliveTimeout = 30_000;
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
});
process.once("SIGTERM", () => process.exit(0));
