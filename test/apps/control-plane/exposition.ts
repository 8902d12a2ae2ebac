// Prometheus text exposition format 0.0.4, strictly: metrics.test.ts reads /metrics with this parser.

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

function parseValue(s: string, where: string): number {
  if (s === "+Inf") return Number.POSITIVE_INFINITY;
  if (s === "-Inf") return Number.NEGATIVE_INFINITY;
  if (s === "NaN") return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) throw new Error(`${where}: bad value ${JSON.stringify(s)}`);
  return Number(s);
}

/** Parse `{a="x",b="y\"z"}` starting at `i`; returns the labels and the index after `}`. */
function parseLabels(line: string, start: number, where: string): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  let i = start + 1;
  for (;;) {
    if (line[i] === "}") return [labels, i + 1];
    const eq = line.indexOf("=", i);
    if (eq < 0) throw new Error(`${where}: label without '='`);
    const name = line.slice(i, eq);
    if (!LABEL_NAME.test(name) || name.startsWith("__")) throw new Error(`${where}: bad label name ${JSON.stringify(name)}`);
    if (name in labels) throw new Error(`${where}: label ${name} twice`);
    if (line[eq + 1] !== '"') throw new Error(`${where}: label value of ${name} not quoted`);
    let value = "";
    let j = eq + 2;
    for (;;) {
      const c = line[j];
      if (c === undefined) throw new Error(`${where}: unterminated label value`);
      if (c === '"') break;
      if (c === "\\") {
        const e = line[j + 1];
        if (e === "\\") value += "\\";
        else if (e === '"') value += '"';
        else if (e === "n") value += "\n";
        else throw new Error(`${where}: bad escape \\${e}`);
        j += 2;
      } else {
        value += c;
        j += 1;
      }
    }
    labels[name] = value;
    i = j + 1;
    if (line[i] === ",") i += 1;
    else if (line[i] !== "}") throw new Error(`${where}: expected ',' or '}' after label ${name}`);
  }
}

/** The family a sample belongs to, given the families declared so far. */
function familyOf(name: string, families: Map<string, Family>): string {
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    const base = name.slice(0, -suffix.length);
    if (name.endsWith(suffix) && ["histogram", "summary"].includes(families.get(base)?.type ?? "")) return base;
  }
  return name;
}

export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  const series = new Set<string>();
  let current: string | null = null;
  if (!text.endsWith("\n")) throw new Error("exposition must end with a newline");
  text.split("\n").forEach((line, n) => {
    const where = `line ${n + 1}`;
    if (line === "") return;
    const enter = (name: string) => {
      if (current !== name) {
        if (closed.has(name)) throw new Error(`${where}: samples of ${name} are not grouped together`);
        if (current) closed.add(current);
        current = name;
      }
    };
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!m) return; // other comments are allowed
      const [, kind, name, rest = ""] = m as unknown as [string, string, string, string | undefined];
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name ${name}`);
      enter(name);
      const f = families.get(name) ?? { name, type: "untyped", help: "", samples: [] };
      families.set(name, f);
      if (kind === "HELP") {
        if (f.help) throw new Error(`${where}: second HELP for ${name}`);
        f.help = rest;
      } else {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type ${rest}`);
        if (f.samples.length > 0) throw new Error(`${where}: TYPE of ${name} after its samples`);
        f.type = rest;
      }
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
    if (!m) throw new Error(`${where}: bad sample line ${JSON.stringify(line)}`);
    const name = m[1]!;
    let i = name.length;
    let labels: Record<string, string> = {};
    if (line[i] === "{") [labels, i] = parseLabels(line, i, where);
    if (line[i] !== " ") throw new Error(`${where}: expected a space before the value`);
    const [valueText, timestamp, extra] = line.slice(i + 1).split(" ");
    if (extra !== undefined || (timestamp !== undefined && !/^-?\d+$/.test(timestamp))) throw new Error(`${where}: trailing garbage`);
    const value = parseValue(valueText ?? "", where);
    const family = familyOf(name, families);
    enter(family);
    const f = families.get(family) ?? { name: family, type: "untyped", help: "", samples: [] };
    families.set(family, f);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (series.has(key)) throw new Error(`${where}: duplicate series ${key}`);
    series.add(key);
    f.samples.push({ name, labels, value });
  });
  for (const f of families.values()) checkFamily(f);
  return families;
}

function checkFamily(f: Family): void {
  const bad = (msg: string) => new Error(`${f.name}: ${msg}`);
  if (!f.help) throw bad("no HELP");
  if (f.type === "counter") {
    if (!f.name.endsWith("_total")) throw bad("a counter's name must end in _total");
    for (const s of f.samples) {
      if (s.name !== f.name) throw bad(`unexpected sample ${s.name}`);
      if (!(s.value >= 0)) throw bad("a counter must not be negative");
    }
  } else if (f.name.endsWith("_total")) throw bad("only counters end in _total");
  if (f.type === "gauge" || f.type === "untyped") {
    for (const s of f.samples) if (s.name !== f.name) throw bad(`unexpected sample ${s.name}`);
  }
  if (f.type === "histogram") {
    const groups = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
    for (const s of f.samples) {
      const { le, ...rest } = s.labels;
      const key = JSON.stringify(Object.entries(rest).sort());
      const g = groups.get(key) ?? { buckets: [] };
      groups.set(key, g);
      if (s.name === `${f.name}_bucket`) {
        if (le === undefined) throw bad("bucket without le");
        g.buckets.push([parseValue(le, f.name), s.value]);
      } else if (s.name === `${f.name}_sum`) g.sum = s.value;
      else if (s.name === `${f.name}_count`) g.count = s.value;
      else throw bad(`unexpected sample ${s.name}`);
      if (s.name !== `${f.name}_bucket` && le !== undefined) throw bad("le outside a bucket");
    }
    for (const [key, g] of groups) {
      const last = g.buckets.at(-1);
      if (!last || last[0] !== Number.POSITIVE_INFINITY) throw bad(`${key}: no +Inf bucket`);
      if (g.count === undefined || g.sum === undefined) throw bad(`${key}: no _sum or _count`);
      if (last[1] !== g.count) throw bad(`${key}: +Inf bucket differs from _count`);
      for (let i = 1; i < g.buckets.length; i++) {
        const [le0, c0] = g.buckets[i - 1]!;
        const [le1, c1] = g.buckets[i]!;
        if (!(le1 > le0)) throw bad(`${key}: buckets not in increasing le`);
        if (c1 < c0) throw bad(`${key}: bucket counts not cumulative`);
      }
    }
  }
}
