// Where a V8 CPU profile's time goes, by owner: each sample is charged to the innermost frame on
// its stack that belongs to a known module (so node's socket and stream internals under
// postgres.js count as the database driver's, under undici as the network's).
//   npx tsx bench/probe-throughput/profile-summary.ts <file.cpuprofile>

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Owners, most specific first; matched against the frame's URL. */
const OWNERS: [string, RegExp][] = [
  ["db driver: postgres.js", /node_modules\/postgres\//],
  ["db driver: pglite (in-process PostgreSQL)", /@electric-sql\/pglite/],
  ["db: drizzle-orm", /node_modules\/drizzle-orm\//],
  ["db: queries (packages/db)", /packages\/db\/src\//],
  ["network: undici", /node_modules\/undici\//],
  ["scoring: core + simple-statistics", /packages\/core\/src\/scoring\/|node_modules\/simple-statistics\//],
  ["health: core state machine", /packages\/core\/src\/health\//],
  ["core: other", /packages\/core\/src\//],
  ["shell: prober", /apps\/control-plane\/src\/prober\//],
  ["shell: health service", /apps\/control-plane\/src\/health\//],
  ["shell: table publisher", /apps\/control-plane\/src\/tables\//],
  ["shell: registry cache", /apps\/control-plane\/src\/registry-cache/],
  ["scheduler: node-cron", /node_modules\/node-cron\//],
  ["p-limit", /node_modules\/(p-limit|yocto-queue)\//],
  ["shell: other control-plane", /apps\/control-plane\/src\//],
  ["bench harness", /bench\/probe-throughput\//],
  ["other packages", /node_modules\//],
];

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  byOwner: { owner: string; ms: number; share: number }[];
  topSelf: { fn: string; where: string; ms: number }[];
}

export function summarizeProfile(profile: CpuProfile, top = 20): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ownerOf = new Map<number, string>();
  const ownerOfNode = (id: number): string => {
    const cached = ownerOf.get(id);
    if (cached) return cached;
    let cur: number | undefined = id;
    let owner = "";
    const leaf = byId.get(id)!.callFrame.functionName;
    if (leaf === "(garbage collector)") owner = "V8: garbage collector";
    else if (leaf === "(program)") owner = "V8/native: (program)";
    else if (leaf === "(idle)") owner = "(idle)";
    while (!owner && cur !== undefined) {
      const url = byId.get(cur)!.callFrame.url;
      const hit = OWNERS.find(([, re]) => re.test(url));
      if (hit) owner = hit[0];
      cur = parent.get(cur);
    }
    owner ||= "node internals (no module on the stack)";
    ownerOf.set(id, owner);
    return owner;
  };
  const ownerMs = new Map<string, number>();
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0) / 1000;
    const owner = ownerOfNode(id);
    ownerMs.set(owner, (ownerMs.get(owner) ?? 0) + ms);
    selfMs.set(id, (selfMs.get(id) ?? 0) + ms);
  });
  const idleMs = ownerMs.get("(idle)") ?? 0;
  ownerMs.delete("(idle)");
  const totalMs = [...ownerMs.values()].reduce((a, b) => a + b, 0);
  const byOwner = [...ownerMs.entries()].map(([owner, ms]) => ({ owner, ms, share: ms / totalMs })).sort((a, b) => b.ms - a.ms);
  // Self time per function (merging nodes of the same function).
  const perFn = new Map<string, { fn: string; where: string; ms: number }>();
  for (const [id, ms] of selfMs) {
    const f = byId.get(id)!.callFrame;
    if (f.functionName === "(idle)") continue;
    const where = `${f.url.replace(/^.*\/(node_modules|apps|packages|bench)\//, "$1/")}:${f.lineNumber + 1}`;
    const key = `${f.functionName}@${where}`;
    const e = perFn.get(key) ?? { fn: f.functionName || "(anonymous)", where, ms: 0 };
    e.ms += ms;
    perFn.set(key, e);
  }
  const topSelf = [...perFn.values()].sort((a, b) => b.ms - a.ms).slice(0, top);
  return { totalMs, idleMs, byOwner, topSelf };
}

export function formatSummary(s: ProfileSummary, probes: number): string {
  const out: string[] = [];
  out.push(
    `  profiled CPU ${s.totalMs.toFixed(0)} ms over ${probes} probes (${((s.totalMs * 1000) / Math.max(1, probes)).toFixed(0)} µs/probe)`,
  );
  for (const o of s.byOwner) {
    out.push(
      `    ${o.owner.padEnd(44)} ${(o.share * 100).toFixed(1).padStart(5)}%  ${((o.ms * 1000) / Math.max(1, probes)).toFixed(0).padStart(6)} µs/probe`,
    );
  }
  out.push("  top functions by self time:");
  for (const f of s.topSelf) out.push(`    ${f.ms.toFixed(0).padStart(6)} ms  ${f.fn}  ${f.where}`);
  return out.join("\n");
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop() ?? "-") && process.argv[2]) {
  const { readFileSync } = await import("node:fs");
  const profile = JSON.parse(readFileSync(process.argv[2], "utf8")) as CpuProfile;
  process.stdout.write(`${formatSummary(summarizeProfile(profile, 30), Number(process.argv[3] ?? 1))}\n`);
}
