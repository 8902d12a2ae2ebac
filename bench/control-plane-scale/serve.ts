// The real control plane (apps/control-plane/src/main.ts) with one addition for the benchmark: over
// the IPC channel, `{ type: "mem" }` answers this process's memory after a full GC and how many
// sockets it holds. Run with `node --expose-gc --import tsx bench/control-plane-scale/serve.ts`.
const collect = (globalThis as { gc?: () => void }).gc;

process.on("message", (message: { type?: string }) => {
  if (message?.type !== "mem" || !process.send) return;
  collect?.();
  collect?.();
  const sockets = process.getActiveResourcesInfo().filter((r) => r === "TCPSocketWrap").length;
  process.send({ type: "mem", mem: process.memoryUsage(), sockets, gc: collect !== undefined });
});

await import("../../apps/control-plane/src/main");

export {};
