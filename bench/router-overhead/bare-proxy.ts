// The floor of this stack: a minimal node:http reverse proxy with a keep-alive agent. It does
// the one thing any router must also do — set the upstream's model and credential (and pass on the
// Anthropic API version, which /v1/messages needs) — and pipes the answer back.
// Env: UPSTREAM_BASE (…/v1), UPSTREAM_KEY, UPSTREAM_MODEL, PORT.
import { Agent, createServer, type IncomingHttpHeaders, request } from "node:http";
import type { AddressInfo } from "node:net";

const base = new URL(process.env.UPSTREAM_BASE ?? "");
const prefix = base.pathname.replace(/\/+$/, "");
const key = process.env.UPSTREAM_KEY ?? "";
const model = process.env.UPSTREAM_MODEL ?? "lab-model";
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const HOP = new Set(["connection", "keep-alive", "transfer-encoding"]);

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    body.model = model;
    const payload = JSON.stringify(body);
    const up = request(
      {
        host: base.hostname,
        port: base.port,
        path: prefix + (req.url ?? "/").slice(3),
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
          accept: req.headers.accept ?? "application/json",
          authorization: `Bearer ${key}`,
          ...(req.headers["anthropic-version"] ? { "anthropic-version": req.headers["anthropic-version"] } : {}),
        },
      },
      (ur) => {
        const headers: IncomingHttpHeaders = {};
        for (const [k, v] of Object.entries(ur.headers)) if (!HOP.has(k)) headers[k] = v;
        res.writeHead(ur.statusCode ?? 502, headers);
        ur.pipe(res);
      },
    );
    up.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    up.end(payload);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
});
process.once("SIGTERM", () => process.exit(0));
