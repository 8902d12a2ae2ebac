// linewatch dashboard, in the browser: live times, charts (uPlot + small canvases), filters, and the
// refresh loop. The server renders every number; this script only draws and keeps the page current.
(() => {
  const body = document.body;
  /** Server clock minus browser clock, so "12 s ago" follows the control plane's time. */
  let offset = Number(body.dataset.now || Date.now()) - Date.now();
  const serverNow = () => Date.now() + offset;
  const PALETTE = ["#3464c4", "#d63c3c", "#1e9e57", "#c98a00", "#8e44ad", "#0f8b8d", "#e07b39", "#5d6d7e", "#c2185b", "#7cb342"];
  const MAX_AUTO_SERIES = 6;
  const state = { refreshes: 0, trend: null, lineChart: null, selection: loadSelection() };
  window.__linewatch = state;

  // ---------- formatting (mirrors views/format.ts) ----------
  function fmtAgo(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return `${s} s`;
    const m = Math.floor(s / 60);
    if (m < 60) return `${m} min`;
    const h = Math.floor(m / 60);
    if (h < 48) return `${h} h`;
    return `${Math.floor(h / 24)} d`;
  }
  function fmtRemaining(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const sec = s % 60;
    if (h > 0) return `${h}h ${String(m).padStart(2, "0")}m`;
    if (m > 0) return `${m}m ${String(sec).padStart(2, "0")}s`;
    return `${sec}s`;
  }
  const hhmm = (ms) => {
    const d = new Date(ms);
    return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
  };
  function tickTimes() {
    const now = serverNow();
    for (const el of document.querySelectorAll("[data-ago]")) el.textContent = fmtAgo(now - Number(el.dataset.ago));
    for (const el of document.querySelectorAll("[data-until]")) el.textContent = fmtRemaining(Number(el.dataset.until) - now);
  }

  function readJson(id) {
    const el = document.getElementById(id);
    if (!el) return null;
    try {
      return JSON.parse(el.textContent || "null");
    } catch {
      return null;
    }
  }

  function cssVar(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }
  function scoreColor(v) {
    return v === null || v === undefined ? cssVar("--muted") : v >= 80 ? cssVar("--good") : v >= 60 ? cssVar("--warn") : cssVar("--bad");
  }

  /** A canvas sized for its CSS box and the screen's pixel ratio. */
  function prepare(canvas, cssWidth, cssHeight) {
    const dpr = window.devicePixelRatio || 1;
    canvas.style.width = `${cssWidth}px`;
    canvas.style.height = `${cssHeight}px`;
    canvas.width = Math.round(cssWidth * dpr);
    canvas.height = Math.round(cssHeight * dpr);
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssWidth, cssHeight);
    return ctx;
  }

  // ---------- which lines the score chart draws ----------
  function loadSelection() {
    try {
      const raw = localStorage.getItem("linewatch.chart");
      return raw ? new Set(JSON.parse(raw)) : null;
    } catch {
      return null;
    }
  }
  function saveSelection() {
    try {
      if (state.selection) localStorage.setItem("linewatch.chart", JSON.stringify([...state.selection]));
      else localStorage.removeItem("linewatch.chart");
    } catch {
      /* private mode: the choice lasts for this page only */
    }
  }
  /** Unless the operator picked lines: all of a small fleet, else the ones that look worst. */
  function chosenLines(data) {
    const known = data.lines.filter((l) => state.selection?.has(l.name));
    if (known.length > 0) return known;
    if (data.lines.length <= 8) return data.lines;
    const worst = (l) => {
      const vals = l.trend.filter((v) => v !== null);
      return vals.length ? Math.min(...vals) : 101;
    };
    return [...data.lines].sort((a, b) => worst(a) - worst(b)).slice(0, MAX_AUTO_SERIES);
  }

  // ---------- overview: score trend (uPlot) ----------
  /** Points only where a value has no neighbour: a line through one point draws nothing. */
  function isolated(u, si) {
    const ys = u.data[si];
    const out = [];
    for (let i = 0; i < ys.length; i++) {
      if (ys[i] !== null && (i === 0 || ys[i - 1] === null) && (i === ys.length - 1 || ys[i + 1] === null)) out.push(i);
    }
    return out;
  }
  /** The pass line (score 60) behind the series. */
  function passLine(u) {
    const y = Math.round(u.valToPos(60, "y", true));
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

  function drawTrend(data) {
    const el = document.getElementById("trend-chart");
    if (!el || !window.uPlot) return;
    const chosen = chosenLines(data);
    const points = chosen.length ? chosen[0].trend.length : 0;
    const xs = [];
    for (let i = 0; i < points; i++) xs.push((data.start + (i + 0.5) * data.bucketMs) / 1000);
    const aligned = [xs, ...chosen.map((l) => l.trend)];
    const width = Math.max(300, el.clientWidth);
    const key = `${chosen.map((l) => l.name).join(",")}|${data.start}|${data.bucketMs}|${width}`;
    const empty = chosen.every((l) => l.trend.every((v) => v === null));
    const note = document.getElementById("trend-empty");
    if (note) note.hidden = !empty;
    colorPicks(chosen);
    if (state.trend && state.trend.key === key) {
      state.trend.plot.setData(aligned, false);
      state.trend.plot.redraw();
      return;
    }
    if (state.trend) state.trend.plot.destroy();
    const opts = {
      width,
      height: 260,
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true, range: [data.start / 1000, (data.start + points * data.bucketMs) / 1000] }, y: { range: [0, 100] } },
      series: [
        { label: "time" },
        ...chosen.map((l, i) => ({
          label: l.name,
          stroke: PALETTE[i % PALETTE.length],
          width: 2,
          value: (_u, v) => (v === null || v === undefined ? "–" : v.toFixed(1)),
          points: { show: true, size: 6, fill: PALETTE[i % PALETTE.length], filter: isolated },
        })),
      ],
      axes: [
        { stroke: "#667085", grid: { stroke: "#eef0f4" } },
        { stroke: "#667085", size: 36, grid: { stroke: "#eef0f4" } },
      ],
      hooks: { drawClear: [passLine] },
    };
    state.trend = { plot: new window.uPlot(opts, aligned, el), key };
  }

  function colorPicks(chosen) {
    const data = readJson("chart-data");
    const colorOf = new Map(chosen.map((l, i) => [l.name, PALETTE[i % PALETTE.length]]));
    for (const box of document.querySelectorAll("input.pick")) {
      const line = data?.lines[Number(box.closest("tr").dataset.i)];
      const c = line && colorOf.get(line.name);
      box.checked = !!c;
      box.style.accentColor = c || "";
    }
  }

  // ---------- overview: sparklines ----------
  function drawSparks(data) {
    for (const canvas of document.querySelectorAll("canvas.spark")) {
      const line = data.lines[Number(canvas.closest("tr").dataset.i)];
      if (!line) continue;
      const w = 120;
      const h = 26;
      const ctx = prepare(canvas, w, h);
      const n = line.trend.length;
      const x = (i) => 2 + (i / Math.max(1, n - 1)) * (w - 4);
      const y = (v) => h - 3 - (v / 100) * (h - 6);
      ctx.strokeStyle = "#eceef2";
      ctx.beginPath();
      ctx.moveTo(0, y(60));
      ctx.lineTo(w, y(60));
      ctx.stroke();
      const last = [...line.trend].reverse().find((v) => v !== null);
      ctx.strokeStyle = ctx.fillStyle = scoreColor(last);
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
  function visibleLines(data) {
    const shown = new Set([...document.querySelectorAll("table.lines tbody tr:not(.hidden)")].map((tr) => Number(tr.dataset.i)));
    return data.lines.filter((_, i) => shown.has(i));
  }
  const rowHeight = (n) => (n <= 10 ? 22 : n <= 40 ? 14 : 9);

  function heatColor(v) {
    if (v === null) return "#f0f1f4";
    // red (0) → amber (0.5) → green (1)
    const stops = [
      [0, [214, 60, 60]],
      [0.5, [233, 185, 73]],
      [1, [30, 158, 87]],
    ];
    const j = v <= 0.5 ? 0 : 1;
    const [a, ca] = stops[j];
    const [b, cb] = stops[j + 1];
    const t = Math.max(0, Math.min(1, (v - a) / (b - a)));
    const c = ca.map((x, k) => Math.round(x + (cb[k] - x) * t));
    return `rgb(${c.join(",")})`;
  }

  function labelRow(ctx, text, y, rh) {
    ctx.fillStyle = "#1c2230";
    ctx.font = `${rh >= 14 ? 12 : 10}px system-ui, sans-serif`;
    ctx.textBaseline = "middle";
    let t = text;
    while (ctx.measureText(t).width > LABEL_W - 10 && t.length > 3) t = t.slice(0, -2);
    ctx.fillText(t === text ? t : `${t}…`, 0, y + rh / 2);
  }

  function drawHeatmap(data) {
    const canvas = document.getElementById("heatmap");
    if (!canvas) return;
    const lines = visibleLines(data);
    const box = canvas.parentElement;
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
    canvas.onmousemove = (ev) => {
      const rect = canvas.getBoundingClientRect();
      const r = Math.floor((ev.clientY - rect.top) / rh);
      const c = Math.floor((ev.clientX - rect.left - LABEL_W) / cw);
      const l = lines[r];
      if (!l || c < 0 || c >= cols) return hideTip();
      const v = l.fields[c];
      showTip(
        ev,
        l.name +
          " · " +
          hhmm(data.start + c * data.heatMs) +
          "–" +
          hhmm(data.start + (c + 1) * data.heatMs) +
          " · " +
          (v === null ? "no probe" : `${v}% of fields`),
      );
    };
    canvas.onmouseleave = hideTip;
  }

  function binRange(data, b) {
    if (b === 0) return "empty";
    const per = data.lengthBins / data.lengthDecades;
    if (b > data.lengthBins) return `≥ ${fmtLen(10 ** data.lengthDecades)}`;
    return `${fmtLen(Math.ceil(10 ** ((b - 1) / per)))}–${fmtLen(Math.floor(10 ** (b / per)))}`;
  }
  function fmtLen(n) {
    return n >= 1000 ? `${(n / 1000).toFixed(n >= 10000 ? 0 : 1).replace(/\.0$/, "")}k` : String(n);
  }

  function drawLengths(data) {
    const canvas = document.getElementById("lengths");
    if (!canvas) return;
    const lines = visibleLines(data);
    const box = canvas.parentElement;
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
          acc += l.len[b];
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
    canvas.onmousemove = (ev) => {
      const rect = canvas.getBoundingClientRect();
      const r = Math.floor((ev.clientY - rect.top) / rh);
      const b = Math.floor((ev.clientX - rect.left - x0) / bw);
      const l = lines[r];
      if (!l || b < 0 || b >= bins) return hideTip();
      showTip(ev, `${l.name} · ${binRange(data, b)} chars · ${l.len[b]} answers`);
    };
    canvas.onmouseleave = hideTip;
  }

  let tip = null;
  function showTip(ev, text) {
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
  function hideTip() {
    if (tip) tip.hidden = true;
  }

  // ---------- line page: scores per sample ----------
  function drawLineChart() {
    const el = document.getElementById("line-chart");
    const data = readJson("line-chart-data");
    if (!el || !data || !window.uPlot) return;
    const xs = [...new Set(data.t)].sort((a, b) => a - b);
    const index = new Map(xs.map((t, i) => [t, i]));
    const series = data.samples.map(() => new Array(xs.length).fill(null));
    data.t.forEach((t, k) => {
      series[data.s[k]][index.get(t)] = data.v[k];
    });
    const note = document.getElementById("trend-empty");
    if (note) note.hidden = xs.length > 0;
    const aligned = [xs.map((t) => t / 1000), ...series];
    const width = Math.max(300, el.clientWidth);
    const key = `${data.samples.join(",")}|${width}`;
    if (state.lineChart && state.lineChart.key === key) {
      state.lineChart.plot.setScale("x", { min: data.start / 1000, max: data.end / 1000 });
      state.lineChart.plot.setData(aligned, false);
      state.lineChart.plot.redraw();
      return;
    }
    if (state.lineChart) state.lineChart.plot.destroy();
    const opts = {
      width,
      height: 260,
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true, range: () => [data.start / 1000, data.end / 1000] }, y: { range: [0, 100] } },
      series: [
        { label: "time" },
        ...data.samples.map((name, i) => ({
          label: name,
          stroke: PALETTE[i % PALETTE.length],
          width: 1.5,
          spanGaps: true,
          value: (_u, v) => (v === null || v === undefined ? "–" : v.toFixed(1)),
          points: { show: true, size: 5, fill: PALETTE[i % PALETTE.length] },
        })),
      ],
      axes: [
        { stroke: "#667085", grid: { stroke: "#eef0f4" } },
        { stroke: "#667085", size: 36, grid: { stroke: "#eef0f4" } },
      ],
      hooks: { drawClear: [passLine] },
    };
    state.lineChart = { plot: new window.uPlot(opts, aligned, el), key };
  }

  // ---------- filters ----------
  function applyFilter() {
    const input = document.getElementById("line-filter");
    if (!input) return;
    const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    const rows = document.querySelectorAll("table.lines tbody tr");
    for (const tr of rows) {
      if (tr.dataset.text === undefined) tr.dataset.text = tr.textContent.toLowerCase();
      const hit = words.every((w) => tr.dataset.text.includes(w));
      tr.classList.toggle("hidden", !hit);
      if (hit) shown++;
    }
    const count = document.getElementById("filter-count");
    if (count) count.textContent = words.length ? `${shown} of ${rows.length}` : "";
    for (const chip of document.querySelectorAll(".summary .chip[data-state]"))
      chip.classList.toggle("on", words.length === 1 && words[0] === chip.dataset.state);
  }
  function applyKinds() {
    const off = new Set([...document.querySelectorAll(".kinds input[data-kind]")].filter((b) => !b.checked).map((b) => b.dataset.kind));
    for (const li of document.querySelectorAll(".events li[data-kind]")) li.classList.toggle("hidden", off.has(li.dataset.kind));
  }

  // ---------- everything that draws ----------
  function render() {
    applyFilter();
    applyKinds();
    tickTimes();
    const data = readJson("chart-data");
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
    if (t.matches?.("input.pick")) {
      const data = readJson("chart-data");
      if (!data) return;
      const line = data.lines[Number(t.closest("tr").dataset.i)];
      if (!line) return;
      const current = new Set(chosenLines(data).map((l) => l.name));
      if (t.checked) current.add(line.name);
      else current.delete(line.name);
      state.selection = current.size ? current : null;
      saveSelection();
      drawTrend(data);
    } else if (t.matches?.(".kinds input")) applyKinds();
  });
  document.addEventListener("input", (ev) => {
    if (ev.target && ev.target.id === "line-filter") {
      applyFilter();
      const data = readJson("chart-data");
      if (data) {
        drawHeatmap(data);
        drawLengths(data);
      }
    }
  });
  document.addEventListener("click", (ev) => {
    const chip = ev.target.closest?.(".summary .chip[data-state]");
    const input = document.getElementById("line-filter");
    if (!chip || !input) return;
    input.value = input.value === chip.dataset.state ? "" : chip.dataset.state;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
  let resizeTimer = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(render, 150);
  });

  // ---------- staying current ----------
  const refreshMs = Number(body.dataset.refreshMs || 0);
  let fingerprint = body.dataset.fingerprint || null;
  const live = document.getElementById("live");
  const liveText = document.getElementById("live-text");
  let lastUpdate = Date.now();
  function setLive(kind) {
    if (!live) return;
    live.classList.toggle("down", kind === "down");
    live.classList.toggle("stale", kind === "stale");
    if (kind === "down") liveText.textContent = "offline, retrying";
  }
  setInterval(() => {
    tickTimes();
    if (live && !live.classList.contains("down")) liveText.textContent = `live · ${fmtAgo(Date.now() - lastUpdate)}`;
  }, 1000);

  /** Fetch this page again and swap the parts marked data-swap; inputs, scroll and charts stay. */
  async function refreshPanels() {
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

  async function poll() {
    if (!document.hidden) {
      try {
        const res = await fetch("/dashboard/state.json", { credentials: "same-origin", cache: "no-store" });
        if (res.status === 401) {
          location.href = `/login?next=${encodeURIComponent(location.pathname + location.search)}`;
          return;
        }
        if (!res.ok) throw new Error(`poll ${res.status}`);
        const s = await res.json();
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

  function start() {
    render();
    // When the first full draw finished (bench/dashboard reads it).
    state.renderedAt = performance.now();
    if (refreshMs > 0) setTimeout(poll, refreshMs);
  }
  // uPlot loads with `defer` before this script; both run after parsing.
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
