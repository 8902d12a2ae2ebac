// The floor of part 1: a bare node:http server in its own process that answers `/small` with
// /healthz's 15 bytes and `/table` with the bytes a router token's table answer carries, with the
// table endpoint's headers; `/table-checked` answers the same after the token check docs/roles.md asks
// for (sha256 of the bearer token, found by its hash, compared in constant time), as TokenStore
// does. What a table answer costs on this machine with nothing else of linewatch around it. The
// body and the token come over IPC; the port goes back the same way.
import { hash, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const small = Buffer.from(JSON.stringify({ status: "ok" }));

process.once("message", (message: { body: string; etag: string; token: string }) => {
  const table = Buffer.from(message.body);
  const known = hash("sha256", message.token, "buffer");
  const byHash = new Map([[known.toString("hex"), known]]);
  const checked = (authorization: string | undefined): boolean => {
    const token = authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
    if (!token) return false;
    const candidate = hash("sha256", token, "buffer");
    const found = byHash.get(candidate.toString("hex"));
    return found !== undefined && timingSafeEqual(found, candidate);
  };
  const server = createServer((req, res) => {
    if (req.url === "/table-checked" && !checked(req.headers.authorization)) {
      res.writeHead(401, { "content-length": 0 });
      res.end();
    } else if (req.url === "/table" || req.url === "/table-checked") {
      res.writeHead(200, {
        etag: message.etag,
        "cache-control": "no-cache",
        "content-type": "application/json",
        "content-length": table.length,
      });
      res.end(table);
    } else {
      res.writeHead(200, { "content-type": "application/json", "content-length": small.length });
      res.end(small);
    }
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => process.send?.({ port: (server.address() as AddressInfo).port }));
});
