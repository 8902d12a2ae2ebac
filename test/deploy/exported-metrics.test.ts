// The shipped Grafana dashboard (deploy/grafana) and alerting rules (deploy/prometheus) read only
// what linewatch exports: a real control plane with lab lines probed and a real router with a little
// traffic through it (ok answers, 5xx with retries and a spent retry budget, 4xx), both on
// 127.0.0.1 (and a webhook sink), are scraped, and every query's metric names, label matchers (and their literal
// values), grouping labels, legend labels and annotation labels must be among what they export.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Lab, startLab } from "@linewatch/lab";
import { type RunningRouter, startRouter } from "@linewatch/router";
import { silentLogger } from "@linewatch/router-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseExposition } from "../apps/control-plane/exposition";
import { createLine, createRoute, eventually, probeNow } from "../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../helpers/control-plane";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver";
import { type ExpressionParts, expressionParts, literalValues } from "./promql-selectors";

const root = fileURLToPath(new URL("../../", import.meta.url));
/** Labels Prometheus adds to every scraped series (the target's), not the process. */
const TARGET_LABELS = new Set(["instance", "job"]);
/** The dashboard's datasource variable, as Grafana writes it. */
const DATASOURCE = "$" + "{datasource}";

/** Sample name (histograms by their _bucket/_sum/_count) → label → values seen. */
type Exported = Map<string, Map<string, Set<string>>>;

let lab: Lab;
let cp: TestControlPlane;
let router: RunningRouter;
let receiver: WebhookReceiver;
let exported: Exported;

function addScrape(into: Exported, text: string): void {
  for (const family of parseExposition(text).values()) {
    for (const s of family.samples) {
      let labels = into.get(s.name);
      if (!labels) {
        labels = new Map();
        into.set(s.name, labels);
      }
      for (const [k, v] of Object.entries(s.labels)) {
        let values = labels.get(k);
        if (!values) {
          values = new Set();
          labels.set(k, values);
        }
        values.add(v);
      }
    }
  }
}

async function chat(model: string): Promise<number> {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "Say hello." }], max_tokens: 50 }),
  });
  await res.arrayBuffer();
  return res.status;
}

beforeAll(async () => {
  lab = await startLab({
    lines: [
      { name: "paid-a" },
      { name: "free-a" },
      { name: "e5a", mode: "errors" },
      { name: "e5b", mode: "errors" },
      { name: "e400", mode: { mode: "errors", status: 400 } },
    ],
  });
  cp = await startTestControlPlane();
  for (const route of ["chat", "failing", "clients"]) await createRoute(cp, route);
  const line = (name: string, route: string, tier = "paid") =>
    createLine(cp, { name, tier, baseUrl: lab.baseUrl(name), routes: [{ route, weight: 100 }] });
  const paid = await line("paid-a", "chat");
  const free = await line("free-a", "chat", "free");
  await line("e5a", "failing");
  await line("e5b", "failing");
  await line("e400", "clients");
  // A webhook sink with a receiver, so its series (every outcome from its creation) are exported.
  receiver = await startWebhookReceiver();
  const hook = await cp.request("/v1/webhooks", {
    method: "POST",
    json: { name: "oncall", url: receiver.url, secret: "whsec-exported-0123456789" },
  });
  expect(hook.status, await hook.clone().text()).toBe(201);
  // Ten rounds: the usage anchors are usable from the eighth answer on, and only probes with a
  // reference count in the billing evidence (linewatch_usage_tokens_total).
  for (let i = 0; i < 10; i++) {
    await probeNow(cp, paid.id);
    await probeNow(cp, free.id);
  }
  router = await startRouter({
    controlPlaneUrl: cp.url,
    routes: ["chat", "failing", "clients"],
    port: 0,
    cacheFile: null,
    logger: silentLogger,
    upstreamTimeoutMs: 5_000,
    reportIntervalMs: 100,
    // Three retries per 10 s and no share of the requests: the failing route spends the budget.
    retryBudgetPct: 0,
    retryBudgetMin: 3,
    ejectAfterFailures: 0,
  });
  for (let i = 0; i < 6; i++) expect(await chat("chat")).toBe(200);
  for (let i = 0; i < 8; i++) expect(await chat("failing")).toBe(500);
  for (let i = 0; i < 2; i++) expect(await chat("clients")).toBe(400);
  expect(await chat("no-such-route")).toBe(404);
  // The router's outcome reports reach the control plane and are judged there.
  await eventually(async () => {
    const text = await (await cp.request("/metrics")).text();
    return ["ok", "http_5xx", "http_4xx"].every((o) => text.includes(`outcome="${o}"`)) && text.includes("linewatch_live_success_rate{");
  }, 20_000);
  exported = new Map();
  addScrape(exported, await (await cp.request("/metrics")).text());
  addScrape(exported, await (await fetch(`${router.url}/metrics`)).text());
}, 120_000);

afterAll(async () => {
  await router?.close();
  await cp?.stop();
  await receiver?.close();
  await lab?.close();
});

/** What is wrong with an expression against the exported series; empty when nothing is. */
function problemsOf(expr: string, parts: ExpressionParts, used: string[] = []): string[] {
  const problems: string[] = [];
  const labelsOfSelectors = new Set<string>(TARGET_LABELS);
  for (const s of parts.selectors) {
    const labels = exported.get(s.metric);
    if (!labels) {
      problems.push(`${s.metric}: not exported (no series of it in either scrape)`);
      continue;
    }
    for (const l of labels.keys()) labelsOfSelectors.add(l);
    for (const m of s.matchers) {
      if (TARGET_LABELS.has(m.label)) continue;
      const values = labels.get(m.label);
      if (!values) {
        problems.push(`${s.metric}: no label ${m.label}`);
        continue;
      }
      for (const v of literalValues(m) ?? []) {
        if (!values.has(v)) problems.push(`${s.metric}{${m.label}${m.op}"${m.value}"}: no series has ${m.label}="${v}"`);
      }
    }
  }
  for (const g of parts.grouping) if (!labelsOfSelectors.has(g)) problems.push(`grouping label ${g}: none of its metrics has it`);
  // What a legend or an annotation may name: the grouping labels, or (without any) the metrics' own.
  const output = parts.grouping.length > 0 ? new Set([...parts.grouping, ...TARGET_LABELS]) : labelsOfSelectors;
  for (const u of used) if (!output.has(u)) problems.push(`${u}: not a label of the result`);
  return problems.map((p) => `${p} — in ${expr.replace(/\s+/g, " ").trim()}`);
}

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: { refId: string; expr: string; legendFormat?: string; datasource?: { uid: string } }[];
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: string | { query: string }; definition?: string }[] };
}

const dashboard = JSON.parse(readFileSync(`${root}deploy/grafana/linewatch.json`, "utf8")) as Dashboard;
const allPanels = (panels: Panel[]): Panel[] => panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
const legendLabels = (legend = "") => [...legend.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)].map((m) => m[1] as string);
const annotationLabels = (text = "") => [...text.matchAll(/\$labels\.([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] as string);

describe("the selector reader", () => {
  it("finds metric names, matchers and grouping labels, and refuses what it cannot read", () => {
    const parts = expressionParts(
      'histogram_quantile(0.9, sum by (line, le) (rate(a_bucket{line=~"$line",x="y"}[$__rate_interval]))) > 2 and on (line) max(b_total offset 1h) without (z)',
    );
    expect(parts.selectors).toEqual([
      {
        metric: "a_bucket",
        matchers: [
          { label: "line", op: "=~", value: "$line" },
          { label: "x", op: "=", value: "y" },
        ],
      },
      { metric: "b_total", matchers: [] },
    ]);
    expect(parts.grouping).toEqual(["line", "le", "line", "z"]);
    expect(parts.functions).toEqual(["histogram_quantile", "sum", "rate", "max"]);
    expect(() => expressionParts("rat(a[5m])")).toThrow(/unknown function rat/);
    expect(() => expressionParts('{__name__="a"}')).toThrow(/without a metric name/);
    expect(() => expressionParts("sum by line (a)")).toThrow(/without a label list/);
    expect(() => expressionParts('a{b="c}')).toThrow();
  });

  it("would catch a misspelled metric, label, value or grouping label", () => {
    const check = (expr: string) => problemsOf(expr, expressionParts(expr));
    expect(check("max by (line) (linewatch_line_score)")).toEqual([]);
    expect(check("max by (line) (linewatch_line_scores)")[0]).toMatch(/not exported/);
    expect(check('linewatch_line_state{lines="x"}')[0]).toMatch(/no label lines/);
    expect(check('linewatch_line_state{state="cooldwn"}')[0]).toMatch(/no series has state="cooldwn"/);
    expect(check("sum by (route) (linewatch_line_score)")[0]).toMatch(/grouping label route/);
    expect(
      problemsOf("sum by (line) (linewatch_line_score)", expressionParts("sum by (line) (linewatch_line_score)"), ["route"])[0],
    ).toMatch(/route: not a label of the result/);
  });
});

describe("deploy/grafana/linewatch.json", () => {
  const panels = allPanels(dashboard.panels);
  const queryPanels = panels.filter((p) => p.type !== "row");

  it("is a dashboard of panels with unique ids, each query on the datasource variable", () => {
    expect(dashboard.uid).toBe("linewatch");
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    expect(queryPanels.length).toBeGreaterThan(10);
    for (const p of queryPanels) {
      expect(p.datasource?.uid, p.title).toBe(DATASOURCE);
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      const refIds = (p.targets ?? []).map((t) => t.refId);
      expect(new Set(refIds).size, p.title).toBe(refIds.length);
      for (const t of p.targets ?? []) expect(t.datasource?.uid, p.title).toBe(DATASOURCE);
    }
  });

  it("queries only metrics and labels the control plane and the router export", () => {
    const problems: string[] = [];
    for (const p of queryPanels) {
      for (const t of p.targets ?? []) {
        problems.push(...problemsOf(t.expr, expressionParts(t.expr), legendLabels(t.legendFormat)).map((x) => `${p.title}: ${x}`));
      }
    }
    for (const v of dashboard.templating.list.filter((x) => x.type === "query")) {
      const query = typeof v.query === "string" ? v.query : v.query.query;
      const m = /^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$/.exec(query);
      if (!m) {
        problems.push(`variable ${v.name}: not a label_values(metric, label) query: ${query}`);
        continue;
      }
      if (!exported.get(m[1] as string)?.has(m[2] as string)) problems.push(`variable ${v.name}: ${m[1]} has no label ${m[2]}`);
    }
    expect(problems).toEqual([]);
  });
});

describe("deploy/prometheus/linewatch.rules.yml", () => {
  it("reads only metrics and labels the control plane and the router export", () => {
    const rules = parse(readFileSync(`${root}deploy/prometheus/linewatch.rules.yml`, "utf8")) as {
      groups: { rules: { alert: string; expr: string; annotations?: Record<string, string> }[] }[];
    };
    const problems: string[] = [];
    const all = rules.groups.flatMap((g) => g.rules);
    expect(all.length).toBeGreaterThan(0);
    for (const r of all) {
      const used = Object.values(r.annotations ?? {}).flatMap(annotationLabels);
      problems.push(...problemsOf(r.expr, expressionParts(r.expr), used).map((x) => `${r.alert}: ${x}`));
    }
    expect(problems).toEqual([]);
  });
});
