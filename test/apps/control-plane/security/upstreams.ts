import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface TinyServer {
  url: string;
  /** Requests received, with their method, URL and headers. */
  requests: { method: string; url: string; headers: IncomingMessage["headers"] }[];
  close(): Promise<void>;
}

/** A one-handler HTTP server on 127.0.0.1 that records what reaches it. */
export async function startTinyServer(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<TinyServer> {
  const requests: TinyServer["requests"] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
      handle(req, res, Buffer.concat(chunks).toString("utf8"));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** An upstream that rejects every key and echoes the one it was sent, as some providers' 401 bodies do. */
export const startKeyEchoUpstream = () =>
  startTinyServer((req, res) => {
    const sent = req.headers.authorization ?? req.headers["x-api-key"] ?? "";
    res.writeHead(401, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        error: { message: `Incorrect API key provided: ${String(sent).replace(/^Bearer /, "")}`, type: "invalid_request_error" },
      }),
    );
  });
