// One target under steady load, for profiles and syscall counts (not a benchmark: no baseline).
//
//   npx tsx bench/router-overhead/profile.ts [--target router|bare|bare-undici] [--dir other-checkout]
//        [--connections 1] [--stream] [--seconds 10] [--strace /tmp/s.txt] [--wrap "…"]
//        [--env NAME=value …] ["--node-args=--cpu-prof --cpu-prof-dir=/tmp/p"] ["--node-args=--trace-gc"]
//
// Starts the lab upstream, a stand-in control plane (one table) and the target in its own
// process (wrapped, and with extra node flags), warms it up, loads it, prints req/s, the target's
// CPU per request (user, system, per thread) and the time window measured (to cut a profile or a
// --trace-gc log to it), then stops it with SIGTERM (profiles are written on exit). --strace
// attaches `strace -c -f` for the measured requests only. --signal-wait N sends SIGUSR2 before
// and after the measured run (with --heapsnapshot-signal, or a preload that samples the heap).

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { benchArgs } from "../args";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const args = benchArgs(import.meta.url, {
  target: { type: "string", default: "router" },
  connections: { type: "string", default: "1" },
  stream: { type: "boolean", default: false },
  seconds: { type: "string", default: "10" },
  wrap: { type: "string", default: "" },
  /** strace -c attached after the warm-up, for the measured requests only: its summary goes to this file. */
  strace: { type: "string", default: "" },
  "node-args": { type: "string", default: "" },
  env: { type: "string", multiple: true, default: [] },
  /** Another checkout (with node_modules) whose router to run. */
  dir: { type: "string" },
  /** Send SIGUSR2 after the measured run (with --node-args=--heapsnapshot-signal=SIGUSR2) and wait this many seconds. */
  "signal-wait": { type: "string", default: "0" },
});

const children: ChildProcess[] = [];
process.on("exit", () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
});

function start(file: string, env: Record<string, string>, wrap: string[], nodeArgs: string[]) {
  const argv = [...wrap, process.execPath, ...nodeArgs, "--import", "tsx", file];
  const child = spawn(argv[0] as string, argv.slice(1), {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const ready = new Promise<string>((res, rej) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      process.stderr.write(d);
      out += d.toString();
      const m = /READY (\S+)/.exec(out);
      if (m) res(m[1] as string);
    });
    child.once("exit", (code) => rej(new Error(`${file} exited (${code})`)));
  });
  return { child, ready };
}

const CLK_TCK = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
/** [user, system] CPU ms of a process, all its threads. */
function cpuMs(pid: number): [number, number] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return [(Number(f[11]) * 1000) / CLK_TCK, (Number(f[12]) * 1000) / CLK_TCK];
}

/** CPU ms per thread (name → ms), to see what runs off the main thread. */
function threadsMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(`${name}#${tid}`, ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK);
    } catch {
      // the thread ended
    }
  }
  return out;
}

async function main() {
  const upstream = start("bench/router-overhead/upstream.ts", {}, [], []);
  const base = await upstream.ready;
  const table = {
    route: "bench",
    version: 1,
    generatedAt: new Date().toISOString(),
    mode: "normal",
    lines: [
      {
        id: "line-up",
        name: "up",
        tier: "paid",
        state: "healthy",
        weight: 10000,
        protocol: "openai-chat",
        baseUrl: base,
        model: "lab-model",
        apiKey: "sk-bench",
        headers: {},
      },
    ],
  };
  const cp = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    req.resume();
    if (url.pathname === "/v1/tables/bench") {
      if (req.headers["if-none-match"] === '"1"') {
        const t = setTimeout(() => {
          res.writeHead(304, { etag: '"1"' });
          res.end();
        }, 25_000);
        res.on("close", () => clearTimeout(t));
        return;
      }
      res.writeHead(200, { "content-type": "application/json", etag: '"1"' });
      res.end(JSON.stringify(table));
    } else if (url.pathname === "/v1/tables") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ tables: [table] }));
    } else if (url.pathname === "/v1/outcomes") {
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"stored":1,"duplicate":false}');
      });
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => cp.listen(0, "127.0.0.1", r));
  const cpUrl = `http://127.0.0.1:${(cp.address() as AddressInfo).port}`;
  const extraEnv = Object.fromEntries((args.env ?? []).map((kv) => kv.split("=", 2) as [string, string]));
  const wrap = args.wrap ? args.wrap.split(" ") : [];
  const nodeArgs = args["node-args"] ? args["node-args"].split(" ") : [];
  const target =
    args.target === "bare" || args.target === "bare-undici"
      ? start(
          `bench/router-overhead/${args.target === "bare" ? "bare-proxy" : "bare-undici"}.ts`,
          { UPSTREAM_BASE: base, UPSTREAM_KEY: "sk-bench", UPSTREAM_MODEL: "lab-model", PORT: "0", ...extraEnv },
          wrap,
          nodeArgs,
        )
      : start(
          args.dir ? `${resolve(args.dir)}/bench/router-overhead/router-ready.ts` : "bench/router-overhead/router-ready.ts",
          { LINEWATCH_URL: cpUrl, LINEWATCH_TOKEN: "bench", LINEWATCH_ROUTES: "bench", PORT: "0", LINEWATCH_CACHE_FILE: "", ...extraEnv },
          wrap,
          nodeArgs,
        );
  const spawnedAt = performance.now();
  const port = await target.ready;
  // The pid whose CPU counts: the node process (under a wrapper, its child).
  let pid = target.child.pid as number;
  if (wrap.length > 0) {
    const kids = execFileSync("pgrep", ["-P", String(pid)])
      .toString()
      .trim()
      .split("\n");
    pid = Number(kids[0]);
  }
  const connections = Number(args.connections);
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections, pipelining: 1 });
  const body = JSON.stringify({
    model: args.target.startsWith("bare") ? "x" : "bench",
    messages: [{ role: "user", content: "hi" }],
    max_tokens: 64,
    ...(args.stream ? { stream: true } : {}),
  });
  const run = async (ms: number) => {
    let n = 0;
    let errors = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() - t0 < ms) {
          const res = await pool.request({
            path: "/v1/chat/completions",
            method: "POST",
            headers: { "content-type": "application/json" },
            body,
          });
          await res.body.text();
          if (res.statusCode !== 200) errors++;
          n++;
        }
      }),
    );
    return { n, errors, seconds: (performance.now() - t0) / 1000 };
  };
  await run(1500);
  if (Number(args["signal-wait"]) > 0) {
    process.kill(pid, "SIGUSR2");
    await new Promise((r) => setTimeout(r, 300));
  }
  let tracer: ChildProcess | null = null;
  if (args.strace) {
    tracer = spawn("strace", ["-c", "-f", "-p", String(pid), "-o", args.strace], { stdio: "ignore" });
    await new Promise((r) => setTimeout(r, 500));
  }
  const c0 = cpuMs(pid);
  const t0 = threadsMs(pid);
  const measureFrom = performance.now() - spawnedAt;
  const r = await run(Number(args.seconds) * 1000);
  const c1 = cpuMs(pid);
  const t1 = threadsMs(pid);
  const user = c1[0] - c0[0];
  const sys = c1[1] - c0[1];
  const cpu = user + sys;
  if (tracer !== null) {
    tracer.kill("SIGINT");
    await new Promise((r) => tracer?.once("exit", r));
  }
  console.log(
    `${args.target} · ${connections} conn${args.stream ? " · stream" : ""}: ${(r.n / r.seconds).toFixed(0)} req/s, ${((cpu * 1000) / r.n).toFixed(1)} µs CPU/req (user ${((user * 1000) / r.n).toFixed(1)}, system ${((sys * 1000) / r.n).toFixed(1)}), ${r.errors} errors, ${r.n} requests`,
  );
  const perThread = [...t1]
    .map(([k, v]) => [k, v - (t0.get(k) ?? 0)] as const)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k} ${((v * 1000) / r.n).toFixed(1)}`);
  console.log(
    `  measured from ${(measureFrom / 1000).toFixed(2)} s to ${((performance.now() - spawnedAt) / 1000).toFixed(2)} s after the target was spawned`,
  );
  console.log(`  µs/req by thread: ${perThread.join(" · ")}`);
  await pool.close();
  if (Number(args["signal-wait"]) > 0) {
    process.kill(pid, "SIGUSR2");
    await new Promise((r) => setTimeout(r, Number(args["signal-wait"]) * 1000));
  }
  target.child.kill("SIGTERM");
  await new Promise((r) => target.child.once("exit", r));
  cp.close();
  cp.closeAllConnections();
  process.exit(0);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
