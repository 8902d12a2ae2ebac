import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { TableQuery } from "@linewatch/contract";
import { allowedRoles, bearerToken, type Role, type TokenStore } from "../../auth";
import { namesVersion, type TableService } from "../../services/tables";
import type { ClientGone } from "../../tables/publisher";

const PREFIX = "/v1/tables/";

/**
 * The Node request listener the control plane serves with. `GET`/`HEAD /v1/tables/:route` with a
 * token that may read it and a route that has a table go straight to its prepared answer (the same
 * TableService answer the Hono route runs, minus building a Fetch Request and Response, a Context and the
 * middleware chain, which cost a table answer more than the answer itself). Anything else is the
 * Hono app's, which answers it as it always has: every refusal and error (401, 403, 404, a bad
 * waitSec), a route's first request (which computes its table), and a path or query that needs
 * decoding.
 */
export function tablesFirst(hono: RequestListener, parts: { tables: TableService; tokens: TokenStore }): RequestListener {
  return (incoming, outgoing) => {
    const method = incoming.method;
    const url = incoming.url ?? "";
    if ((method === "GET" || method === "HEAD") && url.startsWith(PREFIX)) {
      serveTable(parts, incoming, outgoing, url).then(
        (answered) => {
          if (!answered) void hono(incoming, outgoing);
        },
        () => {
          // The Hono route meets the same failure and answers it (503 for an outage, logged as usual).
          if (!outgoing.headersSent) void hono(incoming, outgoing);
          else outgoing.destroy();
        },
      );
      return;
    }
    void hono(incoming, outgoing);
  };
}

/**
 * `waitSec=<digits>` as TableQuery reads it, without zod or URLSearchParams (the accept path of every
 * long-poll: thousands at once after a restart). null: anything else, left to the general parse.
 */
function quickWaitSec(query: string): number | null {
  if (!query.startsWith("waitSec=") || query.length > 10) return null;
  const raw = query.slice(8);
  if (!/^\d{1,2}$/.test(raw)) return null;
  const n = Number(raw);
  return n <= 60 ? n : null;
}

/** Answer a table request that needs nothing but the prepared answer; false: leave it to the Hono app. */
async function serveTable(
  { tables, tokens }: { tables: TableService; tokens: TokenStore },
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  url: string,
): Promise<boolean> {
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  const route = path.slice(PREFIX.length);
  if (route === "" || route.includes("/") || route.includes("%")) return false;
  let waitSec: number | undefined;
  if (q !== -1) {
    const query = url.slice(q + 1);
    const quick = quickWaitSec(query);
    if (quick !== null) waitSec = quick;
    else {
      if (query.includes("%") || query.includes("+")) return false;
      const raw = new URLSearchParams(query).get("waitSec");
      if (raw !== null) {
        const parsed = TableQuery.safeParse({ waitSec: raw });
        if (!parsed.success) return false;
        waitSec = parsed.data.waitSec;
      }
    }
  }
  // As authMiddleware decides, without its refusals (the Hono app gives those, with their headers).
  const authorization = incoming.headers.authorization;
  const token = bearerToken(typeof authorization === "string" ? authorization : undefined);
  let role: Role | "open" = "open";
  if (token) {
    // From the token cache in this turn while it is fresh (no await per accepted poll).
    const now = tokens.authenticateNow(token);
    const row = now === undefined ? await tokens.authenticate(token) : now;
    if (!row || !allowedRoles(incoming.method ?? "GET", path).includes(row.role as Role)) return false;
    role = row.role as Role;
  } else if (!(tokens.isOpenNow() ?? (await tokens.isOpen()))) return false;
  const first = tables.servedIn(tables.snapshotNow() ?? (await tables.snapshot()), route);
  if (!first) return false;
  const ifNoneMatch = incoming.headers["if-none-match"];
  // Without a wait, in the same turn: an await per answer measurably cost a table answer. A long-poll
  // whose ETag is not the served one (every router after a restart) is answered now too.
  const held = waitSec !== undefined && waitSec > 0 && namesVersion(ifNoneMatch, first.served);
  // A long-poll ends when its client goes, as the Hono route's request signal does.
  const gone: ClientGone | undefined = held
    ? (onGone) => {
        if (outgoing.destroyed) {
          onGone();
          return () => {};
        }
        outgoing.once("close", onGone);
        return () => outgoing.off("close", onGone);
      }
    : undefined;
  const request = { router: role === "router", ifNoneMatch, waitSec, gone };
  const answer = held ? await tables.answer(route, first, request) : tables.answerNow(first, request);
  if (outgoing.destroyed) return true;
  if (answer.status === 304) {
    outgoing.writeHead(304, answer.headers);
    outgoing.end();
  } else if (incoming.method === "HEAD") {
    outgoing.writeHead(200, answer.headers); // no length, as the Hono app answers a HEAD
    outgoing.end();
  } else {
    // One literal, not a spread of the answer's headers (measurably cheaper per answer); the listener's
    // test compares every header with the Hono route's.
    const { headers, body } = answer;
    outgoing.writeHead(200, {
      etag: headers.etag,
      "cache-control": headers["cache-control"],
      "content-type": headers["content-type"],
      "content-length": body.length,
    });
    outgoing.end(body);
  }
  return true;
}
