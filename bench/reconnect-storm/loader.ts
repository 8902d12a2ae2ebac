// One load process of the reconnect storm: `count` routers, each on its own TCP connection, start at
// its moment within the spread and do what a router's poller does after a blip: a long-poll with the
// ETag it held (`GET /v1/tables/chat?waitSec=N` + If-None-Match). A stale ETag is answered 200 at
// once; the router then polls again with the new ETag and is held (a current one is held at once).
// Hand-written HTTP/1.1 on net sockets, so the load generator costs as little CPU as it can: it
// shares the two cores with the control plane it measures. Orders and figures go over IPC.
import { connect, type Socket } from "node:net";
import { performance } from "node:perf_hooks";

interface Storm {
  type: "storm";
  host: string;
  port: number;
  path: string;
  token: string;
  /** The ETag each router held before the blip. */
  etag: string;
  count: number;
  /** Epoch ms when the first router connects; the others follow evenly over `spreadMs`. */
  startAt: number;
  spreadMs: number;
  waitSec: number;
}

/** What a router saw, in epoch ms (performance.timeOrigin-based, comparable across processes). */
interface RouterLog {
  /** When it was due to connect. */
  due: number;
  /** First answer (the 200 for a stale ETag); null while none. */
  current: number | null;
  status: number | null;
  /** Answer to the held poll (a publish wakes it), null while held. */
  woken: number | null;
  wokenStatus: number | null;
  error: string | null;
}

const now = () => performance.timeOrigin + performance.now();
const routers: RouterLog[] = [];
const sockets: Socket[] = [];

function request(storm: Storm, etag: string): string {
  return `GET ${storm.path}?waitSec=${storm.waitSec} HTTP/1.1\r\nhost: ${storm.host}:${storm.port}\r\nauthorization: Bearer ${storm.token}\r\nif-none-match: ${etag}\r\n\r\n`;
}

/** Reads one answer after another off a socket: status, ETag and a content-length body. */
function answers(socket: Socket, onAnswer: (status: number, etag: string | null) => void): void {
  let buffer: Buffer = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    for (;;) {
      const end = buffer.indexOf("\r\n\r\n");
      if (end === -1) return;
      const head = buffer.subarray(0, end).toString("latin1");
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffer.length < end + 4 + length) return;
      buffer = buffer.subarray(end + 4 + length);
      const status = Number(head.slice(9, 12));
      const etag = /\r\netag:\s*(\S+)/i.exec(head)?.[1] ?? null;
      onAnswer(status, etag);
    }
  });
}

function router(storm: Storm, log: RouterLog): void {
  const socket = connect({ host: storm.host, port: storm.port });
  sockets.push(socket);
  socket.setNoDelay(true);
  let answered = 0;
  socket.on("connect", () => socket.write(request(storm, storm.etag)));
  answers(socket, (status, etag) => {
    answered++;
    if (answered === 1 && status === 200) {
      log.current = now();
      log.status = status;
      socket.write(request(storm, etag ?? storm.etag)); // the next poll, held until a publish
    } else if (log.current === null) {
      // A current ETag held from the start answers only when woken (or at waitSec: a 304).
      log.current = now();
      log.status = status;
      log.woken = log.current;
      log.wokenStatus = status;
    } else if (log.woken === null) {
      log.woken = now();
      log.wokenStatus = status;
    }
  });
  socket.on("error", (error) => {
    log.error ??= error.message;
  });
}

process.on("message", (message: { type: string } & Partial<Storm>) => {
  if (message.type === "storm") {
    const storm = message as Storm;
    for (let i = 0; i < storm.count; i++) {
      const due = storm.startAt + (i * storm.spreadMs) / storm.count;
      const log: RouterLog = { due, current: null, status: null, woken: null, wokenStatus: null, error: null };
      routers.push(log);
      setTimeout(() => router(storm, log), Math.max(0, due - now()));
    }
    process.send?.({ type: "armed" });
  } else if (message.type === "count") {
    let current = 0;
    let woken = 0;
    for (const r of routers) {
      if (r.current !== null || r.error !== null) current++;
      if (r.woken !== null || r.error !== null) woken++;
    }
    process.send?.({ type: "count", current, woken });
  } else if (message.type === "report") {
    process.send?.({ type: "report", routers });
  } else if (message.type === "close") {
    for (const s of sockets) s.destroy();
    process.send?.({ type: "closed" });
    setImmediate(() => process.exit(0));
  }
});

process.send?.({ type: "ready" });
