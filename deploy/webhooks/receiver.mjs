// A linewatch webhook receiver in plain Node (no dependencies): it checks the signature and the
// timestamp of every request, handles each delivery once, and answers 2xx (docs/alerts.md#signature).
//   LINEWATCH_WEBHOOK_SECRET=<the sink's secret> PORT=9000 node receiver.mjs
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const SECRET = process.env.LINEWATCH_WEBHOOK_SECRET ?? "";
const TOLERANCE_SEC = 300; // a request signed longer ago (or ahead) than this is a replay: refused
const seen = new Set(); // delivery ids handled (keep them where they survive a restart, in production)

/** Why a request is not linewatch's, or null when it is. `body` is the raw body, as received. */
function problemOf(headers, body) {
  const timestamp = headers["x-linewatch-timestamp"] ?? "";
  if (!/^\d+$/.test(timestamp)) return "no timestamp";
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE_SEC) return "timestamp out of tolerance";
  const expected = Buffer.from(`v1=${createHmac("sha256", SECRET).update(`${timestamp}.${body}`).digest("hex")}`);
  const given = Buffer.from(headers["x-linewatch-signature"] ?? "");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "bad signature";
  return null;
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const problem = problemOf(req.headers, body);
    if (problem) {
      res.writeHead(401).end(problem);
      return;
    }
    // At least once: a retry after a lost answer carries the same delivery id; handle it once.
    const delivery = req.headers["x-linewatch-delivery"];
    if (!seen.has(delivery)) {
      seen.add(delivery);
      const event = JSON.parse(body); // format json: {id, kinds, summary, line, routes, event}
      console.log(`${req.headers["x-linewatch-event"]} ${delivery}: ${event.summary ?? event.text}`);
    }
    res.writeHead(204).end();
  });
});
server.listen(Number(process.env.PORT ?? 9000), () => console.log(`listening on ${server.address().port}`));
