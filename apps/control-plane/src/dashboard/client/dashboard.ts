// linewatch dashboard, in the browser: live times, charts (uPlot + small canvases), filters, and the
// refresh loop. The server renders every number; this script only draws and keeps the page current.
// Built for the browser by esbuild when the control plane starts (../assets.ts); the formatters and
// the score rule are the server's own (views/format.ts, core scoreTone and PASS_SCORE), not copies.
import { PASS_SCORE, type ScoreTone, type StatusTone, scoreTone } from "@linewatch/core";
import type uPlot from "uplot";
import type { LineChart } from "../../services/line-views/line-page";
import { ago, remaining } from "../views/format";
import type { chartData } from "../views/overview";
import { firstFilledBucket, fitStart } from "./fit-window";

type ChartData = ReturnType<typeof chartData>;
type ChartLine = ChartData["lines"][number];
type LineChartData = LineChart;

declare global {
  interface Window {
    uPlot?: typeof uPlot;
    __linewatch: State;
  }
}

interface State {
  refreshes: number;
  trend: { plot: uPlot; key: string } | null;
  lineChart: { plot: uPlot; key: string } | null;
  selection: Set<string> | null;
  /** When the first full draw finished (bench/dashboard reads it). */
  renderedAt?: number;
}

const body = document.body;
/** Server clock minus browser clock, so "12 s ago" follows the control plane's time. */
let offset = Number(body.dataset.now || Date.now()) - Date.now();
const serverNow = () => Date.now() + offset;
const PALETTE = ["#3464c4", "#d63c3c", "#1e9e57", "#c98a00", "#8e44ad", "#0f8b8d", "#e07b39", "#5d6d7e", "#c2185b", "#7cb342"];
const MAX_AUTO_SERIES = 6;
const state: State = { refreshes: 0, trend: null, lineChart: null, selection: loadSelection() };
window.__linewatch = state;

const color = (i: number) => PALETTE[i % PALETTE.length] ?? "#3464c4";
const hhmm = (ms: number) => {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
};
/** The table row an element of the lines table sits in, by its index into the chart data. */
const rowIndex = (el: Element) => Number((el.closest("tr") as HTMLElement | null)?.dataset.i);

function tickTimes(): void {
  const now = serverNow();
  for (const el of document.querySelectorAll<HTMLElement>("[data-ago]")) el.textContent = ago(now - Number(el.dataset.ago));
  for (const el of document.querySelectorAll<HTMLElement>("[data-until]")) el.textContent = remaining(Number(el.dataset.until) - now);
}

function readJson<T>(id: string): T | null {
  const el = document.getElementById(id);
  if (!el) return null;
  try {
    return JSON.parse(el.textContent || "null") as T | null;
  } catch {
    return null;
  }
}

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}
/** The colours of the score classes (dashboard.css .s-*), one per tone core's scoreTone gives. */
const TONE_COLORS: Record<ScoreTone, string> = {
  good: "--good",
  warn: "--warn",
  bad: "--bad",
  none: "--muted",
  degraded: "--degraded",
  down: "--cooldown",
  recovering: "--probation",
  unjudged: "--unprobed",
  off: "--muted",
};
/** A score's colour as the tables show it (core scoreTone): by its value while the line is healthy, else by the line's tone. */
function scoreColor(v: number | null | undefined, tone: StatusTone): string {
  return cssVar(TONE_COLORS[scoreTone(v ?? null, tone)]);
}

/** A canvas sized for its CSS box and the screen's pixel ratio. */
function prepare(canvas: HTMLCanvasElement, cssWidth: number, cssHeight: number): CanvasRenderingContext2D {
  const dpr = window.devicePixelRatio || 1;
  canvas.style.width = `${cssWidth}px`;
  canvas.style.height = `${cssHeight}px`;
  canvas.width = Math.round(cssWidth * dpr);
  canvas.height = Math.round(cssHeight * dpr);
  const ctx = canvas.getContext("2d");
  if (!ctx) throw new Error("no 2d canvas");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, cssWidth, cssHeight);
  return ctx;
}

// ---------- which lines the score chart draws ----------
function loadSelection(): Set<string> | null {
  try {
    const raw = localStorage.getItem("linewatch.chart");
    return raw ? new Set(JSON.parse(raw) as string[]) : null;
  } catch {
    return null;
  }
}
function saveSelection(): void {
  try {
    if (state.selection) localStorage.setItem("linewatch.chart", JSON.stringify([...state.selection]));
    else localStorage.removeItem("linewatch.chart");
  } catch {
    /* private mode: the choice lasts for this page only */
  }
}
/** Unless the operator picked lines: all of a small fleet, else the ones that look worst. */
function chosenLines(data: ChartData): ChartLine[] {
  const known = data.lines.filter((l) => state.selection?.has(l.name));
  if (known.length > 0) return known;
  if (data.lines.length <= 8) return data.lines;
  const worst = (l: ChartLine) => {
    const vals = l.trend.filter((v): v is number => v !== null);
    return vals.length ? Math.min(...vals) : 101;
  };
  return [...data.lines].sort((a, b) => worst(a) - worst(b)).slice(0, MAX_AUTO_SERIES);
}

// ---------- overview: score trend (uPlot) ----------
/** Points only where a value has no neighbour: a line through one point draws nothing. */
function isolated(u: uPlot, si: number): number[] {
  const ys = u.data[si] ?? [];
  const out: number[] = [];
  for (let i = 0; i < ys.length; i++) {
    if (ys[i] != null && (i === 0 || ys[i - 1] == null) && (i === ys.length - 1 || ys[i + 1] == null)) out.push(i);
  }
  return out;
}
/** The pass line behind the series. */
function passLine(u: uPlot): void {
  const y = Math.round(u.valToPos(PASS_SCORE, "y", true));
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = "rgba(214,60,60,0.45)";
  ctx.setLineDash([4, 4]);
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(u.bbox.left, y);
  ctx.lineTo(u.bbox.left + u.bbox.width, y);
  ctx.stroke();
  ctx.restore();
}
const scoreValue = (_u: uPlot, v: number | null) => (v === null || v === undefined ? "–" : v.toFixed(1));
const AXES: uPlot.Axis[] = [
  { stroke: "#667085", grid: { stroke: "#eef0f4" } },
  { stroke: "#667085", size: 36, grid: { stroke: "#eef0f4" } },
];

/** Draw a score chart into `el`, or update the one drawn there with the same `key`. */
function scoreChart(
  slot: "trend" | "lineChart",
  el: HTMLElement,
  key: string,
  aligned: uPlot.AlignedData,
  opts: Omit<uPlot.Options, "width" | "height" | "cursor" | "axes" | "hooks">,
  update: (plot: uPlot) => void,
): void {
  const current = state[slot];
  if (current && current.key === key) {
    update(current.plot);
    current.plot.setData(aligned, false);
    current.plot.redraw();
    return;
  }
  current?.plot.destroy();
  const UPlot = window.uPlot;
  if (!UPlot) return;
  const full: uPlot.Options = {
    ...opts,
    width: Math.max(300, el.clientWidth),
    height: 260,
    cursor: { drag: { x: false, y: false } },
    axes: AXES,
    hooks: { drawClear: [passLine] },
  };
  state[slot] = { plot: new UPlot(full, aligned, el), key };
}

function drawTrend(data: ChartData): void {
  const el = document.getElementById("trend-chart");
  if (!el || !window.uPlot) return;
  const chosen = chosenLines(data);
  const points = chosen[0]?.trend.length ?? 0;
  const xs: number[] = [];
  for (let i = 0; i < points; i++) xs.push((data.start + (i + 0.5) * data.bucketMs) / 1000);
  const aligned: uPlot.AlignedData = [xs, ...chosen.map((l) => l.trend)];
  const width = Math.max(300, el.clientWidth);
  // Opens on the buckets that hold data (of any line, so ticking lines does not move it), up to the window.
  const end = data.start + points * data.bucketMs;
  const first = firstFilledBucket(data.lines.map((l) => l.trend));
  const from = fitStart(data.start, end, first === null ? null : data.start + first * data.bucketMs);
  const key = `${chosen.map((l) => l.name).join(",")}|${data.start}|${data.bucketMs}|${width}|${from}`;
  const empty = chosen.every((l) => l.trend.every((v) => v === null));
  const note = document.getElementById("trend-empty");
  if (note) note.hidden = !empty;
  colorPicks(chosen);
  scoreChart(
    "trend",
    el,
    key,
    aligned,
    {
      scales: { x: { time: true, range: [from / 1000, end / 1000] }, y: { range: [0, 100] } },
      series: [
        { label: "time" },
        ...chosen.map((l, i) => ({
          label: l.name,
          stroke: color(i),
          width: 2,
          value: scoreValue,
          points: { show: true, size: 6, fill: color(i), filter: isolated },
        })),
      ],
    },
    () => {},
  );
}

function colorPicks(chosen: ChartLine[]): void {
  const data = readJson<ChartData>("chart-data");
  const colorOf = new Map(chosen.map((l, i) => [l.name, color(i)]));
  for (const box of document.querySelectorAll<HTMLInputElement>("input.pick")) {
    const line = data?.lines[rowIndex(box)];
    const c = line && colorOf.get(line.name);
    box.checked = !!c;
    box.style.accentColor = c || "";
  }
}

// ---------- overview: sparklines ----------
function drawSparks(data: ChartData): void {
  for (const canvas of document.querySelectorAll<HTMLCanvasElement>("canvas.spark")) {
    const line = data.lines[rowIndex(canvas)];
    if (!line) continue;
    const w = 120;
    const h = 26;
    const ctx = prepare(canvas, w, h);
    const n = line.trend.length;
    const x = (i: number) => 2 + (i / Math.max(1, n - 1)) * (w - 4);
    const y = (v: number) => h - 3 - (v / 100) * (h - 6);
    ctx.strokeStyle = "#eceef2";
    ctx.beginPath();
    ctx.moveTo(0, y(PASS_SCORE));
    ctx.lineTo(w, y(PASS_SCORE));
    ctx.stroke();
    const last = [...line.trend].reverse().find((v) => v !== null);
    ctx.strokeStyle = ctx.fillStyle = scoreColor(last, line.tone);
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    let drawing = false;
    line.trend.forEach((v, i) => {
      if (v === null) {
        drawing = false;
        return;
      }
      const alone = (i === 0 || line.trend[i - 1] === null) && (i === n - 1 || line.trend[i + 1] === null);
      if (alone) ctx.fillRect(x(i) - 1.5, y(v) - 1.5, 3, 3);
      if (drawing) ctx.lineTo(x(i), y(v));
      else ctx.moveTo(x(i), y(v));
      drawing = true;
    });
    ctx.stroke();
  }
}

// ---------- overview: heatmap and length distribution ----------
const LABEL_W = 130;
function visibleLines(data: ChartData): ChartLine[] {
  const shown = new Set([...document.querySelectorAll<HTMLElement>("table.lines tbody tr:not(.hidden)")].map((tr) => Number(tr.dataset.i)));
  return data.lines.filter((_, i) => shown.has(i));
}
const rowHeight = (n: number) => (n <= 10 ? 22 : n <= 40 ? 14 : 9);

type Rgb = [number, number, number];
const RED: Rgb = [214, 60, 60];
const AMBER: Rgb = [233, 185, 73];
const GREEN: Rgb = [30, 158, 87];
/** red (0) → amber (0.5) → green (1) */
function heatColor(v: number | null): string {
  if (v === null) return "#f0f1f4";
  const [a, ca, cb] = v <= 0.5 ? [0, RED, AMBER] : [0.5, AMBER, GREEN];
  const t = Math.max(0, Math.min(1, (v - a) / 0.5));
  return `rgb(${ca.map((x, k) => Math.round(x + ((cb[k] ?? x) - x) * t)).join(",")})`;
}

function labelRow(ctx: CanvasRenderingContext2D, text: string, y: number, rh: number): void {
  ctx.fillStyle = "#1c2230";
  ctx.font = `${rh >= 14 ? 12 : 10}px system-ui, sans-serif`;
  ctx.textBaseline = "middle";
  let t = text;
  while (ctx.measureText(t).width > LABEL_W - 10 && t.length > 3) t = t.slice(0, -2);
  ctx.fillText(t === text ? t : `${t}…`, 0, y + rh / 2);
}

/** Tooltips over a canvas of rows: `at` says what is under the pointer, or null. */
function hover(canvas: HTMLCanvasElement, at: (x: number, y: number) => string | null): void {
  canvas.onmousemove = (ev) => {
    const rect = canvas.getBoundingClientRect();
    const text = at(ev.clientX - rect.left, ev.clientY - rect.top);
    if (text === null) hideTip();
    else showTip(ev, text);
  };
  canvas.onmouseleave = hideTip;
}

function drawHeatmap(data: ChartData): void {
  const canvas = document.getElementById("heatmap") as HTMLCanvasElement | null;
  const box = canvas?.parentElement;
  if (!canvas || !box) return;
  const lines = visibleLines(data);
  const w = Math.max(320, box.clientWidth - 4);
  const rh = rowHeight(lines.length);
  const cols = lines[0] ? lines[0].fields.length : 24;
  const axisH = 20;
  const h = Math.max(40, lines.length * rh + axisH);
  const ctx = prepare(canvas, w, h);
  const cw = (w - LABEL_W) / cols;
  lines.forEach((l, r) => {
    labelRow(ctx, l.name, r * rh, rh);
    l.fields.forEach((v, c) => {
      ctx.fillStyle = heatColor(v === null ? null : v / 100);
      ctx.fillRect(LABEL_W + c * cw, r * rh, Math.max(1, cw - 1), rh - 1);
    });
  });
  ctx.fillStyle = "#667085";
  ctx.font = "11px system-ui, sans-serif";
  ctx.textBaseline = "top";
  for (let c = 0; c <= cols; c += 6)
    ctx.fillText(hhmm(data.start + c * data.heatMs), Math.min(w - 30, LABEL_W + c * cw), lines.length * rh + 4);
  hover(canvas, (x, y) => {
    const l = lines[Math.floor(y / rh)];
    const c = Math.floor((x - LABEL_W) / cw);
    if (!l || c < 0 || c >= cols) return null;
    const v = l.fields[c] ?? null;
    const span = `${hhmm(data.start + c * data.heatMs)}–${hhmm(data.start + (c + 1) * data.heatMs)}`;
    return `${l.name} · ${span} · ${v === null ? "no probe" : `${v}% of fields`}`;
  });
}

function fmtLen(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 10000 ? 0 : 1).replace(/\.0$/, "")}k` : String(n);
}
function binRange(data: ChartData, b: number): string {
  if (b === 0) return "empty";
  const per = data.lengthBins / data.lengthDecades;
  if (b > data.lengthBins) return `≥ ${fmtLen(10 ** data.lengthDecades)}`;
  return `${fmtLen(Math.ceil(10 ** ((b - 1) / per)))}–${fmtLen(Math.floor(10 ** (b / per)))}`;
}

function drawLengths(data: ChartData): void {
  const canvas = document.getElementById("lengths") as HTMLCanvasElement | null;
  const box = canvas?.parentElement;
  if (!canvas || !box) return;
  const lines = visibleLines(data);
  const w = Math.max(320, box.clientWidth - 4);
  const rh = Math.max(14, rowHeight(lines.length));
  const axisH = 20;
  const h = Math.max(40, lines.length * rh + axisH);
  const ctx = prepare(canvas, w, h);
  const bins = data.lengthBins + 2;
  const bw = (w - LABEL_W - 50) / bins;
  const x0 = LABEL_W;
  lines.forEach((l, r) => {
    labelRow(ctx, l.name, r * rh, rh);
    const total = l.len.reduce((a, b) => a + b, 0);
    const max = Math.max(1, ...l.len);
    ctx.fillStyle = "#f4f5f7";
    ctx.fillRect(x0, r * rh, bins * bw, rh - 1);
    l.len.forEach((n, b) => {
      if (!n) return;
      const bh = Math.max(1, ((rh - 3) * n) / max);
      ctx.fillStyle = b === 0 ? cssVar("--bad") : l.state === "cooldown" ? "#d98b8b" : "#6d8fd0";
      ctx.fillRect(x0 + b * bw + 1, r * rh + rh - 1 - bh, Math.max(1, bw - 2), bh);
    });
    if (total > 0) {
      let acc = 0;
      let med = 0;
      for (let b = 0; b < bins; b++) {
        acc += l.len[b] ?? 0;
        if (acc >= total / 2) {
          med = b;
          break;
        }
      }
      ctx.fillStyle = "#1c2230";
      ctx.fillRect(x0 + (med + 0.5) * bw - 1, r * rh, 2, rh - 1);
    }
    ctx.fillStyle = "#667085";
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    ctx.fillText(String(total), x0 + bins * bw + 6, r * rh + rh / 2);
  });
  ctx.fillStyle = "#667085";
  ctx.font = "11px system-ui, sans-serif";
  ctx.textBaseline = "top";
  const per = data.lengthBins / data.lengthDecades;
  ctx.fillText("0", x0 + 0.3 * bw, lines.length * rh + 4);
  for (let d = 0; d <= data.lengthDecades; d++) ctx.fillText(fmtLen(10 ** d), x0 + (1 + d * per) * bw - 4, lines.length * rh + 4);
  ctx.fillText("n", x0 + bins * bw + 6, lines.length * rh + 4);
  hover(canvas, (x, y) => {
    const l = lines[Math.floor(y / rh)];
    const b = Math.floor((x - x0) / bw);
    if (!l || b < 0 || b >= bins) return null;
    return `${l.name} · ${binRange(data, b)} chars · ${l.len[b] ?? 0} answers`;
  });
}

let tip: HTMLDivElement | null = null;
function showTip(ev: MouseEvent, text: string): void {
  if (!tip) {
    tip = document.createElement("div");
    tip.className = "tooltip";
    document.body.appendChild(tip);
  }
  tip.textContent = text;
  tip.style.left = `${ev.clientX + 12}px`;
  tip.style.top = `${ev.clientY + 12}px`;
  tip.hidden = false;
}
function hideTip(): void {
  if (tip) tip.hidden = true;
}

// ---------- line page: scores per sample ----------
/** The line chart's x window (ms), read by its range function and by each refresh alike. */
const lineWindow = { from: 0, end: 0 };
function drawLineChart(): void {
  const el = document.getElementById("line-chart");
  const data = readJson<LineChartData>("line-chart-data");
  if (!el || !data || !window.uPlot) return;
  const xs = [...new Set(data.t)].sort((a, b) => a - b);
  const index = new Map(xs.map((t, i) => [t, i]));
  const series: (number | null)[][] = data.samples.map(() => new Array<number | null>(xs.length).fill(null));
  data.t.forEach((t, k) => {
    const row = series[data.s[k] ?? -1];
    const at = index.get(t);
    if (row && at !== undefined) row[at] = data.v[k] ?? null;
  });
  const note = document.getElementById("trend-empty");
  if (note) note.hidden = xs.length > 0;
  const aligned: uPlot.AlignedData = [xs.map((t) => t / 1000), ...series];
  const width = Math.max(300, el.clientWidth);
  // Opens on the probes that exist (with a margin of 5% before the first), up to the chosen window.
  const firstAt = xs[0] ?? null;
  lineWindow.from = fitStart(data.start, data.end, firstAt, firstAt === null ? 0 : (data.end - firstAt) * 0.05);
  lineWindow.end = data.end;
  scoreChart(
    "lineChart",
    el,
    `${data.samples.join(",")}|${width}`,
    aligned,
    {
      scales: { x: { time: true, range: () => [lineWindow.from / 1000, lineWindow.end / 1000] }, y: { range: [0, 100] } },
      series: [
        { label: "time" },
        ...data.samples.map((name, i) => ({
          label: name,
          stroke: color(i),
          width: 1.5,
          spanGaps: true,
          value: scoreValue,
          points: { show: true, size: 5, fill: color(i) },
        })),
      ],
    },
    (plot) => plot.setScale("x", { min: lineWindow.from / 1000, max: lineWindow.end / 1000 }),
  );
}

// ---------- filters ----------
function applyFilter(): void {
  const input = document.getElementById("line-filter") as HTMLInputElement | null;
  if (!input) return;
  const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  const rows = document.querySelectorAll<HTMLElement>("table.lines tbody tr");
  for (const tr of rows) {
    tr.dataset.text ??= (tr.textContent ?? "").toLowerCase();
    const text = tr.dataset.text;
    const hit = words.every((w) => text.includes(w));
    tr.classList.toggle("hidden", !hit);
    if (hit) shown++;
  }
  const count = document.getElementById("filter-count");
  if (count) count.textContent = words.length ? `${shown} of ${rows.length}` : "";
  for (const chip of document.querySelectorAll<HTMLElement>(".summary .chip[data-state]"))
    chip.classList.toggle("on", words.length === 1 && words[0] === chip.dataset.state);
}
function applyKinds(): void {
  const off = new Set(
    [...document.querySelectorAll<HTMLInputElement>(".kinds input[data-kind]")].filter((b) => !b.checked).map((b) => b.dataset.kind),
  );
  for (const li of document.querySelectorAll<HTMLElement>(".events li[data-kind]")) li.classList.toggle("hidden", off.has(li.dataset.kind));
}

// ---------- everything that draws ----------
function render(): void {
  applyFilter();
  applyKinds();
  tickTimes();
  const data = readJson<ChartData>("chart-data");
  if (data) {
    drawTrend(data);
    drawSparks(data);
    drawHeatmap(data);
    drawLengths(data);
  }
  drawLineChart();
}

document.addEventListener("change", (ev) => {
  const t = ev.target;
  if (!(t instanceof HTMLInputElement)) return;
  if (t.matches("input.pick")) {
    const data = readJson<ChartData>("chart-data");
    const line = data?.lines[rowIndex(t)];
    if (!data || !line) return;
    const current = new Set(chosenLines(data).map((l) => l.name));
    if (t.checked) current.add(line.name);
    else current.delete(line.name);
    state.selection = current.size ? current : null;
    saveSelection();
    drawTrend(data);
  } else if (t.matches(".kinds input")) applyKinds();
});
document.addEventListener("input", (ev) => {
  if (ev.target instanceof HTMLElement && ev.target.id === "line-filter") {
    applyFilter();
    const data = readJson<ChartData>("chart-data");
    if (data) {
      drawHeatmap(data);
      drawLengths(data);
    }
  }
});
document.addEventListener("click", (ev) => {
  const chip = ev.target instanceof Element ? ev.target.closest<HTMLElement>(".summary .chip[data-state]") : null;
  const input = document.getElementById("line-filter") as HTMLInputElement | null;
  if (!chip || !input) return;
  input.value = input.value === chip.dataset.state ? "" : (chip.dataset.state ?? "");
  input.dispatchEvent(new Event("input", { bubbles: true }));
});
let resizeTimer = 0;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = window.setTimeout(render, 150);
});

// ---------- staying current ----------
const refreshMs = Number(body.dataset.refreshMs || 0);
let fingerprint = body.dataset.fingerprint || null;
const live = document.getElementById("live");
const liveText = document.getElementById("live-text");
let lastUpdate = Date.now();
function setLive(kind: "ok" | "down"): void {
  if (!live || !liveText) return;
  live.classList.toggle("down", kind === "down");
  live.classList.remove("stale");
  if (kind === "down") liveText.textContent = "offline, retrying";
}
setInterval(() => {
  tickTimes();
  if (live && liveText && !live.classList.contains("down")) liveText.textContent = `live · ${ago(Date.now() - lastUpdate)}`;
}, 1000);

/** Fetch this page again and swap the parts marked data-swap; inputs, scroll and charts stay. */
async function refreshPanels(): Promise<void> {
  const res = await fetch(location.pathname + location.search, { credentials: "same-origin", headers: { "x-linewatch-refresh": "1" } });
  if (res.redirected || !res.ok) throw new Error(`refresh ${res.status}`);
  const doc = new DOMParser().parseFromString(await res.text(), "text/html");
  for (const fresh of doc.querySelectorAll("[data-swap][id]")) {
    const current = document.getElementById(fresh.id);
    if (!current) continue;
    const top = current.scrollTop;
    const left = current.scrollLeft;
    current.replaceWith(fresh);
    fresh.scrollTop = top;
    fresh.scrollLeft = left;
  }
  if (doc.body.dataset.now) offset = Number(doc.body.dataset.now) - Date.now();
  // The page may be a little older than the poll's answer (the server caches aggregates briefly).
  fingerprint = doc.body.dataset.fingerprint || fingerprint;
  if (doc.title) document.title = doc.title;
  state.refreshes++;
  render();
}

async function poll(): Promise<void> {
  if (!document.hidden) {
    try {
      const res = await fetch("/dashboard/state.json", { credentials: "same-origin", cache: "no-store" });
      if (res.status === 401) {
        location.href = `/login?next=${encodeURIComponent(location.pathname + location.search)}`;
        return;
      }
      if (!res.ok) throw new Error(`poll ${res.status}`);
      const s = (await res.json()) as { now: number; fingerprint: string };
      offset = s.now - Date.now();
      if (fingerprint !== s.fingerprint) await refreshPanels();
      lastUpdate = Date.now();
      setLive("ok");
    } catch {
      setLive("down");
    }
  }
  setTimeout(poll, refreshMs);
}

// A notice after a form is for this view only: reloading or refreshing should not repeat it.
const url = new URL(location.href);
if (url.searchParams.has("done")) {
  url.searchParams.delete("done");
  url.searchParams.delete("name");
  history.replaceState(null, "", url.pathname + url.search + url.hash);
}

function start(): void {
  render();
  state.renderedAt = performance.now();
  if (refreshMs > 0) setTimeout(poll, refreshMs);
}
// uPlot loads with `defer` before this script; both run after parsing.
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
