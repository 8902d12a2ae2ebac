// What every dashboard page shares: the frame a page is rendered in (with the headers that keep it from
// being framed or running foreign script), who may look (the cookie or a bearer token), and the small
// parsers of the query string.
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Child } from "hono/jsx";
import type { AppDeps } from "../deps";
import { WINDOWS, type WindowHours } from "../services/line-views/index";
import { assetUrl, loadAssets } from "./assets";
import {
  canWrite,
  checkLoginToken,
  clearTokenCookie,
  type DashboardTokens,
  isSameOrigin,
  resolveAccess,
  setTokenCookie,
  type Viewer,
} from "./session";
import { Layout } from "./views/layout";
import { LoginBody, MessageBody } from "./views/login";

const FORM_MAX_BYTES = 64 * 1024;
const DEFAULT_REFRESH_MS = 5_000;

export type PageStatus = 200 | 400 | 401 | 403 | 404 | 409 | 413;
export interface PageExtra {
  refreshMs?: number;
  charts?: boolean;
  header?: Child;
  fingerprint?: string;
}

export const parseHours = (v: string | undefined): WindowHours =>
  (WINDOWS as readonly number[]).includes(Number(v)) ? (Number(v) as WindowHours) : 6;

/** `?refresh=N` (seconds) for a wall screen or a test; default every 5 s. */
export const parseRefresh = (v: string | undefined) => {
  const n = Number(v);
  return Number.isFinite(n) && n >= 1 && n <= 300 ? Math.round(n * 1000) : DEFAULT_REFRESH_MS;
};

/** A path with `?done=…&name=…` added, for the fixed notice after a form. */
export function withDone(path: string, done: string, name: string): string {
  const url = new URL(path, "http://x");
  url.searchParams.set("done", done);
  url.searchParams.set("name", name);
  return `${url.pathname}${url.search}${url.hash}`;
}

export class Pages {
  /** Forms are small: a body over 64 KiB gets the "too large" page, unread. */
  readonly formLimit: MiddlewareHandler;

  constructor(
    private readonly deps: Pick<AppDeps, "clock">,
    readonly tokens: DashboardTokens,
  ) {
    this.formLimit = bodyLimit({
      maxSize: FORM_MAX_BYTES,
      onError: (c) =>
        this.page(
          c,
          null,
          "Too large",
          <MessageBody title="Too large" message={`A form may hold at most ${FORM_MAX_BYTES / 1024} KiB.`} />,
          413,
        ),
    });
  }

  async page(c: Context, viewer: Viewer | null, title: string, body: Child, status: PageStatus = 200, extra: PageExtra = {}) {
    const url = new URL(c.req.url);
    // Built at the first page or asset asked for (the script is bundled then), not at every start.
    const asset = (name: string) => assetUrl(loadAssets(), name);
    const element = (
      <Layout
        title={title}
        asset={asset}
        viewer={viewer}
        now={this.deps.clock.now()}
        path={url.pathname + url.search}
        refreshMs={extra.refreshMs}
        charts={extra.charts}
        header={extra.header}
        fingerprint={extra.fingerprint}
      >
        {body}
      </Layout>
    );
    // No framing (the drain buttons must not be clickjacked, open mode has no cookie to withhold),
    // scripts only from this site: an answer excerpt or a line name can never run as code.
    c.header(
      "content-security-policy",
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    c.header("x-frame-options", "DENY");
    c.header("referrer-policy", "same-origin");
    c.header("x-content-type-options", "nosniff");
    // Standards mode (without a doctype, tables would not inherit the page's font).
    return c.html(`<!doctype html>${await element}`, status);
  }

  /** A page that says one thing: "not found", "refused", "nothing changed". */
  message(c: Context, viewer: Viewer | null, title: string, heading: string, message: string, status: PageStatus) {
    return this.page(c, viewer, title, <MessageBody title={heading} message={message} />, status);
  }

  /** Who may look: a redirect to /login (or 401 for the JSON poll) when nobody signed in. */
  async guard(c: Context, need: "read" | "write"): Promise<Viewer | Response> {
    const access = await resolveAccess(c, this.tokens);
    if (!access.ok) {
      if (access.reason === "forbidden") {
        const why = `A ${access.role} token cannot use the dashboard: sign in with an admin or viewer token.`;
        return this.message(c, null, "Forbidden", "Not for this token", why, 403);
      }
      if (access.reason === "stale") clearTokenCookie(c);
      if (c.req.path.endsWith(".json")) return c.json({ error: { code: "unauthorized", message: "sign in at /login", details: [] } }, 401);
      const url = new URL(c.req.url);
      const next = c.req.method === "GET" ? url.pathname + url.search : "/";
      return c.redirect(`/login?next=${encodeURIComponent(next)}${access.reason === "stale" ? "&expired=1" : ""}`, 303);
    }
    if (need === "write") {
      if (!isSameOrigin(c)) return this.message(c, access.viewer, "Forbidden", "Refused", "This form came from another site.", 403);
      if (!canWrite(access.viewer)) {
        const why = "A viewer token may look but not change: sign in with an admin token.";
        return this.message(c, access.viewer, "Forbidden", "Read-only", why, 403);
      }
    }
    return access.viewer;
  }

  /** A GET page's start: `?token=…` taken once (see tokenFromQuery), then the guard. */
  async reader(c: Context): Promise<Viewer | Response> {
    return (await this.tokenFromQuery(c)) ?? this.guard(c, "read");
  }

  /** `?token=…` once: check it, keep it as the cookie, and drop it from the address bar. */
  private async tokenFromQuery(c: Context): Promise<Response | null> {
    const token = c.req.query("token");
    if (token === undefined) return null;
    const checked = await checkLoginToken(this.tokens, token);
    const url = new URL(c.req.url);
    url.searchParams.delete("token");
    if (!checked.ok)
      return this.page(c, null, "Sign in", <LoginBody next={url.pathname + url.search} error={checked.message} open={false} />, 401);
    setTokenCookie(c, token);
    return c.redirect(url.pathname + url.search, 303);
  }
}
