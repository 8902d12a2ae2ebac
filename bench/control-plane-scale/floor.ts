// The floor of part 1: a bare node:http server in its own process that answers `/small` with
// /healthz's 15 bytes and `/table` with the bytes a router token's table answer carries, with the
// table endpoint's headers. What the size of a table answer costs on this machine with nothing of
// linewatch around it. The body comes over IPC; the port goes back the same way.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const small = Buffer.from(JSON.stringify({ status: "ok" }));

process.once("message", (message: { body: string; etag: string }) => {
  const table = Buffer.from(message.body);
  const server = createServer((req, res) => {
    if (req.url === "/table") {
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
