import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../../helpers/control-plane";
import { launchBrowser, watchErrors } from "./browser";

const ADMIN = "dashboard-admin-token-0123456789abcdef";

describe("dashboard sign-in (tokens exist)", () => {
  let cp: TestControlPlane;
  let browser: Browser;
  let lineId: string;
  const tokens: Record<string, string> = {};

  async function createToken(name: string, role: string): Promise<string> {
    const res = await cp.request("/v1/tokens", { method: "POST", json: { name, role }, token: ADMIN });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { token: string }).token;
  }

  const adminState = async () =>
    ((await (await cp.request(`/v1/lines/${lineId}`, { token: ADMIN })).json()) as { adminState: string }).adminState;

  /** A form post as a browser on another site, or a script, would send it. */
  const post = (path: string, body: string, headers: Record<string, string>) =>
    fetch(`${cp.url}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body,
    });

  beforeAll(async () => {
    cp = await startTestControlPlane({ env: { LINEWATCH_ADMIN_TOKEN: ADMIN, LINEWATCH_SHIPPED_SAMPLES: "false" } });
    expect((await cp.request("/v1/routes", { method: "POST", json: { name: "chat-default" }, token: ADMIN })).status).toBe(201);
    const res = await cp.request("/v1/lines", {
      method: "POST",
      token: ADMIN,
      json: {
        name: "paid-a",
        tier: "paid",
        protocol: "openai-chat",
        baseUrl: "http://127.0.0.1:9/v1",
        model: "m",
        apiKey: "sk-live-key-never-shown",
        routes: [{ route: "chat-default", weight: 10 }],
      },
    });
    expect(res.status).toBe(201);
    lineId = ((await res.json()) as { id: string }).id;
    tokens.viewer = await createToken("dash-viewer", "viewer");
    tokens.router = await createToken("dash-router", "router");
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await cp?.stop();
    await cp?.testDb.dispose();
  });

  it("asks to sign in without a token; the poll endpoint answers 401; forms change nothing", async () => {
    const home = await fetch(`${cp.url}/?hours=1`, { redirect: "manual" });
    expect(home.status).toBe(303);
    expect(home.headers.get("location")).toBe(`/login?next=${encodeURIComponent("/?hours=1")}`);
    expect((await fetch(`${cp.url}/lines/${lineId}`, { redirect: "manual" })).status).toBe(303);
    const poll = await fetch(`${cp.url}/dashboard/state.json`);
    expect(poll.status).toBe(401);
    expect(((await poll.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    const drain = await post("/dashboard/admin", `op=drained:${lineId}`, { origin: cp.url });
    expect(drain.status).toBe(303);
    expect(drain.headers.get("location")).toMatch(/^\/login/);
    expect(await adminState()).toBe("active");
  });

  it("a viewer signs in through /login and reads, but cannot change anything", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${cp.url}/lines/${lineId}`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.locator("#f-token").fill(tokens.viewer!);
    await Promise.all([page.waitForURL(`${cp.url}/lines/${lineId}`), page.locator("form[action='/login'] button[type=submit]").click()]);
    expect(await page.locator("h1").textContent()).toContain("paid-a");
    expect(await page.locator("button", { hasText: "drain" }).count()).toBe(0);
    expect(await page.content()).not.toContain("sk-live-key-never-shown");

    await page.goto(`${cp.url}/`);
    expect(await page.locator("table.lines tbody tr").count()).toBe(1);
    expect(await page.locator("#add-line").count()).toBe(0);
    expect(await page.locator(".who").textContent()).toContain("viewer · dash-viewer");
    // The cookie is HttpOnly (scripts never see it) and SameSite=Strict.
    expect(await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).toBe("");
    const cookie = (await context.cookies()).find((c) => c.name === "lw_token");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/" });

    // Same site, viewer's cookie: refused, and nothing changed.
    const refused = await page.request.post(`${cp.url}/dashboard/admin`, {
      form: { op: `drained:${lineId}` },
      headers: { origin: cp.url },
      maxRedirects: 0,
    });
    expect(refused.status()).toBe(403);
    expect(await adminState()).toBe("active");
    // The API stays bearer-only: the dashboard's cookie opens nothing under /v1.
    expect((await page.request.get(`${cp.url}/v1/lines`)).status()).toBe(401);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("an admin link with ?token= keeps it as a cookie, drops it from the address, and the forms work", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${cp.url}/?token=${ADMIN}&hours=1`);
    expect(page.url()).toBe(`${cp.url}/?hours=1`);
    await Promise.all([page.waitForURL(/done=drained|\/\?hours=1$/), page.locator(`button[value="drained:paid-a"]`).click()]);
    expect(await page.locator(".notice").textContent()).toContain("paid-a drained");
    expect(await adminState()).toBe("drained");
    await Promise.all([page.waitForURL(/\/\?hours=1/), page.locator(`button[value="active:paid-a"]`).click()]);
    expect(await adminState()).toBe("active");

    // Signing out clears the cookie: the next visit asks again.
    await Promise.all([page.waitForURL(/\/login/), page.locator(".who button", { hasText: "sign out" }).click()]);
    await page.goto(`${cp.url}/`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await context.close();
  });

  it("a router token or an unknown one cannot sign in", async () => {
    const page = await browser.newPage();
    await page.goto(`${cp.url}/login`);
    await page.locator("#f-token").fill(tokens.router!);
    const [asRouter] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/login") && r.request().method() === "POST"),
      page.locator("form[action='/login'] button").click(),
    ]);
    expect(asRouter.status()).toBe(401);
    expect(await page.locator(".form-error").textContent()).toContain("router token cannot open the dashboard");
    await page.locator("#f-token").fill("lw_admin_not-a-real-token");
    const [unknown] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/login") && r.request().method() === "POST"),
      page.locator("form[action='/login'] button").click(),
    ]);
    expect(unknown.status()).toBe(401);
    expect(await page.locator(".form-error").textContent()).toContain("unknown or revoked");
    const viaQuery = await page.goto(`${cp.url}/?token=${tokens.router}`);
    expect(viaQuery?.status()).toBe(401);
    await page.close();
  });

  it("refuses a form posted from another site, even with an admin cookie", async () => {
    const cookie = { cookie: `lw_token=${ADMIN}` };
    const evil = await post("/dashboard/admin", `op=drained:${lineId}`, { ...cookie, origin: "http://evil.example" });
    expect(evil.status).toBe(403);
    const crossSite = await post("/dashboard/admin", `op=drained:${lineId}`, { ...cookie, "sec-fetch-site": "cross-site", origin: cp.url });
    expect(crossSite.status).toBe(403);
    const noOrigin = await post("/dashboard/admin", `op=drained:${lineId}`, cookie);
    expect(noOrigin.status).toBe(403);
    expect(await adminState()).toBe("active");
    // The same request from the dashboard's own origin goes through.
    const own = await post("/dashboard/admin", `op=drained:${lineId}&next=/`, { ...cookie, origin: cp.url });
    expect(own.status).toBe(303);
    expect(await adminState()).toBe("drained");
    await post("/dashboard/admin", `op=active:${lineId}`, { ...cookie, origin: cp.url });
  });

  it("a revoked token's cookie stops working at once and is cleared", async () => {
    const token = await createToken("dash-short-lived", "viewer");
    const before = await fetch(`${cp.url}/`, { headers: { cookie: `lw_token=${token}` }, redirect: "manual" });
    expect(before.status).toBe(200);
    expect((await cp.request("/v1/tokens/dash-short-lived", { method: "DELETE", token: ADMIN })).status).toBe(200);
    const after = await fetch(`${cp.url}/`, { headers: { cookie: `lw_token=${token}` }, redirect: "manual" });
    expect(after.status).toBe(303);
    expect(after.headers.get("location")).toContain("expired=1");
    expect(after.headers.get("set-cookie")).toMatch(/lw_token=;.*Max-Age=0/i);
  });
});
