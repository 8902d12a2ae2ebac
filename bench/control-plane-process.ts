// A control plane in a child process, for the benchmarks that measure it from outside (memory,
// control-plane-scale): wait for the URL it prints, stop it the way an operator would.
import type { ChildProcess } from "node:child_process";

/** The URL the control plane prints once it serves; rejects with its stderr's tail if it exits or takes too long. */
export function controlPlaneUrl(proc: ChildProcess, timeoutMs: number): Promise<string> {
  let stderr = "";
  proc.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  return new Promise<string>((res, rej) => {
    let text = "";
    const timer = setTimeout(() => rej(new Error(`control plane not ready in ${timeoutMs / 1000} s: ${stderr}`)), timeoutMs);
    proc.stdout?.on("data", (d: Buffer) => {
      text += d.toString();
      const m = /linewatch control plane: (\S+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        res(m[1] as string);
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      rej(new Error(`control plane exited (${code}): ${stderr}`));
    });
  });
}

/** SIGTERM (in-flight probes finish, claims handed back), SIGKILL after 20 s. */
export async function stopControlPlane(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise<void>((res) => proc.once("exit", () => res()));
  proc.kill("SIGTERM");
  const timer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
  await exited;
  clearTimeout(timer);
}

/** A request to a bench's control plane with a token; a 4xx or 5xx throws with its body. */
export async function controlPlaneRequest(
  url: string,
  path: string,
  init: { method?: string; json?: unknown; token: string },
): Promise<Response> {
  const res = await fetch(`${url}${path}`, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${init.token}`,
      ...(init.json === undefined ? {} : { "content-type": "application/json" }),
    },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  if (res.status >= 400) throw new Error(`${init.method ?? "GET"} ${path} → ${res.status} ${await res.text()}`);
  return res;
}

/** The control plane's memory and open sockets, asked over IPC (`bench/control-plane-scale/serve.ts` answers). */
export function controlPlaneMemory(proc: ChildProcess): Promise<{ rss: number; heapUsed: number; sockets: number }> {
  return new Promise((res) => {
    const on = (m: { type: string; mem: NodeJS.MemoryUsage; sockets: number }) => {
      if (m.type !== "mem") return;
      proc.off("message", on);
      res({ rss: m.mem.rss, heapUsed: m.mem.heapUsed, sockets: m.sockets });
    };
    proc.on("message", on);
    proc.send({ type: "mem" });
  });
}
