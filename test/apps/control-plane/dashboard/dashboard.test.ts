import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { firstFilledBucket, fitStart } from "../../../../apps/control-plane/src/dashboard/client/fit-window";
import { type Demo, startDemo } from "../../../../apps/control-plane/src/demo";
import { createLine, probeNow } from "../../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../../helpers/control-plane";
import { countColoredPixels, launchBrowser, watchErrors } from "./browser";

/** The first series colours of the score chart (client/dashboard.ts PALETTE). */
const SERIES_COLORS = ["#3464c4", "#d63c3c", "#1e9e57", "#c98a00"];

describe("dashboard in a browser (open mode, the demo's lines)", () => {
  let cp: TestControlPlane;
  let demo: Demo;
  let browser: Browser;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    cp = await startTestControlPlane();
    demo = await startDemo(cp.engine.deps, cp.services, 0);
    const lines = ((await (await cp.request("/v1/lines")).json()) as { lines: { id: string; name: string }[] }).lines;
    for (const l of lines) ids[l.name] = l.id;
    // No scheduler in tests: a few probes by hand give every panel data.
    for (const id of Object.values(ids)) await probeNow(cp, id);
    demo.lab.setMode("free-b", "truncate");
    await probeNow(cp, ids["free-b"]!);
    await probeNow(cp, ids["free-b"]!);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await demo?.stop();
    await cp?.stop();
    await cp?.testDb.dispose();
  });

  async function open(path: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    const res = await page.goto(`${cp.url}${path}`);
    expect(res?.status()).toBe(200);
    return { page, errors };
  }

  /** A score chart's x window (s) and its first point with a value, as the page drew it. */
  async function chartWindow(page: Page, slot: "trend" | "lineChart"): Promise<{ min: number; max: number; first: number }> {
    return page.evaluate((slot) => {
      type Plot = { scales: { x: { min: number; max: number } }; data: (number | null)[][] };
      const plot = (globalThis as unknown as { __linewatch: Record<string, { plot: Plot }> }).__linewatch[slot]!.plot;
      const xs = plot.data[0] as number[];
      const first = xs.findIndex((_, i) => plot.data.slice(1).some((s) => s[i] !== null && s[i] !== undefined));
      return { min: plot.scales.x.min, max: plot.scales.x.max, first: xs[first] as number };
    }, slot);
  }

  const row = (page: Page, name: string) =>
    page.locator("table.lines tbody tr", { has: page.locator("td.name a", { hasText: new RegExp(`^${name}$`) }) });
  const tableRow = (page: Page, route: string, lineId: string) =>
    page.locator(`#tables-body .route[data-route="${route}"] tr[data-line="${lineId}"]`);

  it("lists the lines with their states, worst first", async () => {
    const { page, errors } = await open("/");
    for (const name of ["paid-a", "paid-b", "free-a", "free-b"]) await expect(row(page, name).count()).resolves.toBe(1);
    expect(await row(page, "free-b").getAttribute("data-state")).toBe("cooldown");
    expect(await row(page, "free-b").locator(".badge").textContent()).toBe("cooldown");
    expect(await row(page, "paid-a").locator(".badge").textContent()).toBe("healthy");
    // The line going bad is at the top, with its cooldown counting down.
    expect(await page.locator("table.lines tbody tr").first().getAttribute("data-state")).toBe("cooldown");
    // Eight failed probes in two bursts: each failure in cooldown doubles it, so it may be at its 1 h cap.
    expect(await row(page, "free-b").locator(".timers").textContent()).toMatch(/(\d+h \d\dm|\d+m \d\ds|\d+s) left/);
    // Each route's table as shares: free-b is out (0), the shares of the others add up to 100%.
    expect(await tableRow(page, "chat-default", ids["free-b"]!).locator("td.weight").textContent()).toBe("0");
    const weights = await page.locator('#tables-body .route[data-route="chat-default"] td.weight').allTextContents();
    expect(weights.map(Number).reduce((a, b) => a + b, 0)).toBe(10_000);
    // The header counts states at a glance; the timeline has the switch with its reason.
    expect(await page.locator("#summary .chip.st-cooldown").textContent()).toContain("1 cooldown");
    const switched = page.locator(".events li[data-kind='state_change']", { hasText: "free-b" });
    expect(await switched.first().locator(".change").textContent()).toBe("healthy → cooldown");
    expect(await switched.first().locator(".reason").textContent()).toMatch(/^failure_evidence: content failures/);
    expect(errors).toEqual([]);
    await page.close();
    // Not frameable, scripts only from the app itself (the page above ran under this policy).
    const headers = (await cp.request("/")).headers;
    expect(headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(headers.get("content-security-policy")).toContain("script-src 'self'");
  });

  it("draws the score trend, sparklines, the completeness heatmap and the length distribution", async () => {
    const { page, errors } = await open("/");
    await page.waitForSelector("#trend-chart canvas");
    // Pixels in the series' colours: the chart drew points, not just axes and a grid.
    expect(await countColoredPixels(page, "#trend-chart canvas", SERIES_COLORS)).toBeGreaterThan(20);
    const series = await page.evaluate(() => {
      const w = globalThis as unknown as { __linewatch: { trend: { plot: { data: (number | null)[][] } } } };
      return w.__linewatch.trend.plot.data.slice(1).map((s) => s.filter((v) => v !== null).length);
    });
    expect(series).toHaveLength(4);
    for (const n of series) expect(n).toBeGreaterThan(0);
    // A fresh start: minutes of data in a 6 h window. The chart opens on them, not on a sliver at its right edge.
    const trend = await chartWindow(page, "trend");
    const windowStart = JSON.parse((await page.locator("#chart-data").textContent()) ?? "{}").start / 1000;
    expect(trend.min).toBeGreaterThan(windowStart);
    expect(trend.max - trend.min).toBeLessThanOrEqual(30 * 60);
    // Where it opens is fitStart's rule (its geometry is tabled in dashboard-fit-window.test.ts) over the
    // buckets drawn: how old the data is when the page loads depends on the machine, so that rule, not a ratio.
    const chartData = JSON.parse((await page.locator("#chart-data").textContent()) ?? "{}") as {
      start: number;
      bucketMs: number;
      lines: { trend: (number | null)[] }[];
    };
    const firstBucket = firstFilledBucket(chartData.lines.map((l) => l.trend));
    const trendEnd = chartData.start + (chartData.lines[0]?.trend.length ?? 0) * chartData.bucketMs;
    const trendFrom = fitStart(chartData.start, trendEnd, firstBucket === null ? null : chartData.start + firstBucket * chartData.bucketMs);
    expect(trend.min).toBeCloseTo(trendFrom / 1000, 3);
    expect(trend.first).toBeGreaterThanOrEqual(trend.min);
    expect(trend.first).toBeLessThan(trend.max);
    // Greens and reds of scores, completeness cells and length bars.
    expect(await countColoredPixels(page, "canvas.spark", ["#1e9e57", "#c98a00", "#d63c3c"])).toBeGreaterThan(4);
    expect(await countColoredPixels(page, "#heatmap", ["#1e9e57"], 60)).toBeGreaterThan(50);
    expect(await countColoredPixels(page, "#lengths", ["#6d8fd0", "#d98b8b"])).toBeGreaterThan(20);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("registers a line through the form; the key is never shown", async () => {
    const { page, errors } = await open("/");
    await page.locator("#add-line > summary").click();
    const form = page.locator("#add-line form");
    await form.locator("[name=name]").fill("free-c");
    await form.locator("[name=tier]").selectOption("free");
    await form.locator("[name=model]").fill("lab-model");
    await form.locator("[name=baseUrl]").fill(demo.lab.baseUrl("free-a"));
    await form.locator("[name=apiKey]").fill("sk-dashboard-secret-4711");
    await form.locator("[name='route.0']").selectOption("chat-default");
    await form.locator("[name='weight.0']").fill("30");
    await Promise.all([page.waitForURL(/\/(\?.*)?$/), form.locator("button[type=submit]").click()]);
    expect(await page.locator(".notice").textContent()).toContain("free-c registered");
    await expect(row(page, "free-c").count()).resolves.toBe(1);
    expect(await row(page, "free-c").locator(".tier").textContent()).toBe("free");
    expect(await page.content()).not.toContain("sk-dashboard-secret-4711");

    const api = (
      (await (await cp.request("/v1/lines")).json()) as { lines: { name: string; hasApiKey: boolean; routes: unknown }[] }
    ).lines.find((l) => l.name === "free-c");
    expect(api).toMatchObject({ hasApiKey: true, routes: [{ route: "chat-default", weight: 30 }] });
    await row(page, "free-c").locator("td.name a").click();
    await page.waitForURL(/\/lines\//);
    expect(await page.locator("h1").textContent()).toContain("free-c");
    expect(await page.content()).not.toContain("sk-dashboard-secret-4711");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows a bad form's errors next to its fields, keeps the values, and saves nothing", async () => {
    const { page } = await open("/");
    await page.locator("#add-line > summary").click();
    const form = page.locator("#add-line form");
    await form.locator("[name=name]").fill("bad name!");
    await form.locator("[name=baseUrl]").fill("ftp://example.test/v1");
    await form.locator("[name=apiKey]").fill("sk-never-echoed-0815");
    await form.locator("[name='route.0']").selectOption("chat-default");
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/dashboard/lines") && r.request().method() === "POST"),
      form.locator("button[type=submit]").click(),
    ]);
    expect(response.status()).toBe(400);
    await page.waitForSelector("#add-line[open] .form-error");
    const errorOf = (field: string) => page.locator(`#add-line [id="err-${field}"]`).textContent();
    expect(await errorOf("name")).toContain("letters, digits");
    expect(await errorOf("baseUrl")).toContain("http(s) URL");
    expect(await errorOf("model")).toBeTruthy();
    expect(await errorOf("weight.0")).toContain("base weight");
    expect(await page.locator("#add-line [name=name]").inputValue()).toBe("bad name!");
    expect(await page.locator("#add-line [name=apiKey]").inputValue()).toBe("");
    expect(await page.content()).not.toContain("sk-never-echoed-0815");

    // A name that exists: the API's conflict, shown at the name field.
    await page.locator("#add-line [name=name]").fill("paid-a");
    await page.locator("#add-line [name=model]").fill("m");
    await page.locator("#add-line [name=baseUrl]").fill(demo.lab.baseUrl("paid-a"));
    await page.locator("#add-line [name='weight.0']").fill("5");
    const [conflict] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/dashboard/lines")),
      page.locator("#add-line button[type=submit]").click(),
    ]);
    expect(conflict.status()).toBe(409);
    await page.waitForSelector("#add-line [id='err-name']");
    expect(await page.locator("#add-line [id='err-name']").textContent()).toContain("already exists");
    const names = ((await (await cp.request("/v1/lines")).json()) as { lines: { name: string }[] }).lines.map((l) => l.name);
    expect(names.filter((n) => n === "paid-a")).toHaveLength(1);
    expect(names).not.toContain("bad name!");
    await page.close();
  });

  it("drains a line: weight 0 in its route's table; enabling brings it back", async () => {
    const line = await createLine(cp, {
      name: "paid-c",
      baseUrl: demo.lab.baseUrl("paid-a"),
      routes: [{ route: "chat-default", weight: 40 }],
    });
    const { page, errors } = await open("/");
    const weight = tableRow(page, "chat-default", line.id).locator("td.weight");
    expect(Number(await weight.textContent())).toBeGreaterThan(0);

    await Promise.all([page.waitForURL(/\/(\?.*)?$/), row(page, "paid-c").locator("button", { hasText: "drain" }).click()]);
    expect(await page.locator(".notice").textContent()).toContain("paid-c drained");
    expect(await weight.textContent()).toBe("0");
    expect(await tableRow(page, "chat-default", line.id).locator(".badge").textContent()).toBe("drained");
    expect(await row(page, "paid-c").locator(".badge").textContent()).toBe("drained");
    expect(await row(page, "paid-c").locator("td.weights b").textContent()).toBe("0.0%");
    const table = (await (await cp.request("/v1/tables/chat-default")).json()) as { lines: { id: string }[] };
    expect(table.lines.map((l) => l.id)).not.toContain(line.id);

    await Promise.all([page.waitForURL(/\/(\?.*)?$/), row(page, "paid-c").locator("button", { hasText: "enable" }).click()]);
    expect(await row(page, "paid-c").getAttribute("data-state")).not.toBe("drained");
    expect(Number(await weight.textContent())).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("adds a sample through its form; bad JSON is an error at the request field", async () => {
    const { page } = await open("/");
    await page.locator("#add-sample > summary").click();
    const form = page.locator("#add-sample form");
    await form.locator("[name=name]").fill("capital-fr");
    await form.locator("[name=request]").fill('{"messages": [{"role": "user", "content": "Capital of France?"}');
    const [bad] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/dashboard/samples")),
      form.locator("button[type=submit]").click(),
    ]);
    expect(bad.status()).toBe(400);
    expect(await page.locator("#add-sample [id='err-request']").textContent()).toContain("not valid JSON");
    expect(await page.locator("#add-sample [name=name]").inputValue()).toBe("capital-fr");

    await page
      .locator("#add-sample [name=request]")
      .fill('{"messages": [{"role": "user", "content": "Capital of France? One word."}], "max_tokens": 20}');
    await page.locator("#add-sample [name='expect.contains']").fill("Paris");
    await page.locator("#add-sample [name='expect.maxLength']").fill("200");
    await page.locator("#add-sample [name=routes]").fill("chat-default");
    await Promise.all([page.waitForURL(/\/(\?.*)?$/), page.locator("#add-sample button[type=submit]").click()]);
    expect(await page.locator(".notice").textContent()).toContain("capital-fr added");
    expect(await page.locator("table.samples td", { hasText: "capital-fr" }).count()).toBe(1);
    const samples = ((await (await cp.request("/v1/samples")).json()) as { samples: { name: string; expect: unknown; routes: string[] }[] })
      .samples;
    expect(samples.find((s) => s.name === "capital-fr")).toMatchObject({
      expect: { contains: ["Paris"], maxLength: 200 },
      routes: ["chat-default"],
    });
    await page.close();
  });

  it("a line's page shows each probe's components, its answer and why it failed", async () => {
    const { page, errors } = await open(`/lines/${ids["free-b"]}`);
    expect(await page.locator("h1 .badge").textContent()).toBe("cooldown");
    const failed = page.locator("table.probes tbody tr.fail");
    expect(await failed.count()).toBeGreaterThan(0);
    const first = failed.first();
    expect(await first.locator("td.comp-v").count()).toBe(5);
    expect(await first.locator("td.reasons").textContent()).toMatch(/below|missing|expected/);
    // Each failed probe with an answer names the check it failed.
    expect(await page.locator("table.probes tbody tr.fail td.reasons .check.s-bad").first().textContent()).toMatch(
      /✗ (minLength|anchoredLength|requiredFields|contains|matches|answer|nonce|varies|content)/,
    );
    expect((await first.locator("td.excerpt").textContent())?.trim().length).toBeGreaterThan(0);
    expect(await page.locator("table.probes tbody tr.pass").count()).toBeGreaterThan(0);
    await page.waitForSelector("#line-chart canvas");
    expect(await countColoredPixels(page, "#line-chart canvas", SERIES_COLORS)).toBeGreaterThan(20);
    // The per-sample chart opens on the probes that exist too: the first one is not at the right edge.
    const chart = await chartWindow(page, "lineChart");
    expect(chart.max - chart.min).toBeLessThanOrEqual(30 * 60);
    const lineData = JSON.parse((await page.locator("#line-chart-data").textContent()) ?? "{}") as { start: number; end: number };
    const firstMs = chart.first * 1000;
    expect(chart.min).toBeCloseTo(fitStart(lineData.start, lineData.end, firstMs, (lineData.end - firstMs) * 0.05) / 1000, 3);
    expect(chart.first).toBeGreaterThan(chart.min);
    expect(chart.first).toBeLessThanOrEqual(chart.max);
    // Names work in the address bar too.
    const byName = await page.goto(`${cp.url}/lines/free-b`);
    expect(byName?.status()).toBe(200);
    expect(await page.locator("h1").textContent()).toContain("free-b");
    expect(errors).toEqual([]);
    const missing = await page.goto(`${cp.url}/lines/no-such-line`);
    expect(missing?.status()).toBe(404);
    await page.close();
  });

  it("refreshes itself when something changes, without a reload", async () => {
    const { page, errors } = await open("/?refresh=1");
    await page.evaluate(() => {
      (globalThis as unknown as { marker: number }).marker = 42;
    });
    expect(await row(page, "paid-b").getAttribute("data-state")).toBe("healthy");
    const res = await cp.request(`/v1/lines/${ids["paid-b"]}`, { method: "PATCH", json: { adminState: "drained" } });
    expect(res.status).toBe(200);
    // Polled every second; the swap happens in place (the marker below survives).
    await page.waitForSelector(`table.lines tr[data-line="${ids["paid-b"]}"][data-state="drained"]`, { timeout: 20_000 });
    expect(await row(page, "paid-b").getAttribute("data-state")).toBe("drained");
    expect(await tableRow(page, "chat-default", ids["paid-b"]!).locator("td.weight").textContent()).toBe("0");
    expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(42);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("keeps the header's counts current on a live page (a wall screen must not say all is well)", async () => {
    const { page, errors } = await open("/?refresh=1");
    await page.evaluate(() => {
      (globalThis as unknown as { marker: number }).marker = 7;
    });
    const summary = page.locator("#summary");
    const healthy = async () => Number((await summary.locator(".chip.st-healthy").textContent())?.match(/^(\d+) healthy/)?.[1]);
    const before = await healthy();
    expect(before).toBeGreaterThan(0);
    expect(await summary.locator(".chip.st-disabled").count()).toBe(0);
    const res = await cp.request(`/v1/lines/${ids["paid-a"]}`, { method: "PATCH", json: { adminState: "disabled" } });
    expect(res.status).toBe(200);
    // Polled every second: the header is swapped in place with the panels, no reload (the marker survives).
    await page.waitForSelector("#summary .chip.st-disabled", { timeout: 20_000 });
    expect(await summary.locator(".chip.st-disabled").textContent()).toBe("1 disabled");
    expect(await healthy()).toBe(before - 1);
    expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(7);
    // The state chips still filter the table after the swap.
    await summary.locator(".chip.st-disabled").click();
    expect(await page.locator("table.lines tbody tr:not(.hidden)").count()).toBe(1);
    expect(await row(page, "paid-a").getAttribute("data-state")).toBe("disabled");
    expect(errors).toEqual([]);
    await page.close();
  });
});
