import { isUuid, LinePatchSchema } from "@linewatch/contract";
import type { Context } from "hono";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { compress } from "hono/compress";
import type { Child } from "hono/jsx";
import { parse as parseYaml } from "yaml";
import { type AuthEnv, TokenStore } from "../auth";
import type { AppDeps } from "../deps";
import type { Engine } from "../engine";
import { ApiError } from "../errors";
import { runReplay } from "../replay/run-replay";
import { type ApiResult, InProcessApi } from "./api-client";
import { ASSET_PREFIX, assetUrl, loadAssets } from "./assets";
import { detailPath, type FormErrors, type FormValues, formValues, parseLineForm, parseSampleForm } from "./forms";
import { loadLinePage, resolveLineId } from "./line-data";
import { OverviewData, WINDOWS, type WindowHours } from "./overview-data";
import {
  canWrite,
  checkLoginToken,
  clearTokenCookie,
  DashboardTokens,
  isSameOrigin,
  resolveAccess,
  safeNext,
  setTokenCookie,
  type Viewer,
} from "./session";
import { emptyForm, type FormState } from "./views/forms";
import { Layout, Notice } from "./views/layout";
import { LinePageBody } from "./views/line-page";
import { LoginBody, MessageBody } from "./views/login";
import { OverviewBody, Summary } from "./views/overview";
import { ReplayBody, type ReplayForm } from "./views/replay-page";

const FORM_MAX_BYTES = 64 * 1024;
const DEFAULT_REFRESH_MS = 5_000;

const parseHours = (v: string | undefined): WindowHours =>
  (WINDOWS as readonly number[]).includes(Number(v)) ? (Number(v) as WindowHours) : 6;

/** `?refresh=N` (seconds) for a wall screen or a test; default every 5 s. */
const parseRefresh = (v: string | undefined) => {
  const n = Number(v);
  return Number.isFinite(n) && n >= 1 && n <= 300 ? Math.round(n * 1000) : DEFAULT_REFRESH_MS;
};

/** A path with `?done=…&name=…` added, for the fixed notice after a form. */
function withDone(path: string, done: string, name: string): string {
  const url = new URL(path, "http://x");
  url.searchParams.set("done", done);
  url.searchParams.set("name", name);
  return `${url.pathname}${url.search}${url.hash}`;
}

/** The API's error envelope onto the form: details that name a field go next to it. */
function apiErrors(result: Extract<ApiResult<unknown>, { ok: false }>, toField: (path: readonly PropertyKey[]) => string): FormErrors {
  const errors: FormErrors = {};
  for (const d of result.error.details) {
    const key = d.field ? toField(detailPath(d.field)) : "";
    errors[key] = errors[key] ? `${errors[key]}; ${d.message}` : d.message;
  }
  if (!errors[""] && Object.keys(errors).length === 0) errors[""] = result.error.message;
  return errors;
}

/** What the page may echo back into a form after an error: never a secret. */
const echo = (values: FormValues): FormValues => {
  const { apiKey: _secret, ...rest } = values;
  return rest;
};

/** The operator dashboard at `/` (server-rendered Hono JSX, charts drawn by uPlot served from here). */
export function dashboardRoutes(deps: AppDeps, engine: Engine) {
  const app = new Hono<AuthEnv>();
  const tokens = new DashboardTokens(new TokenStore(deps));
  const overview = new OverviewData(deps, engine);
  const api = new InProcessApi(deps, engine);
  // Built at the first page or asset asked for (the script is bundled then), not at every start.
  const asset = (name: string) => assetUrl(loadAssets(), name);
  const gzip = compress();
  const formLimit = bodyLimit({
    maxSize: FORM_MAX_BYTES,
    onError: (c) =>
      page(c, null, "Too large", <MessageBody title="Too large" message={`A form may hold at most ${FORM_MAX_BYTES / 1024} KiB.`} />, 413),
  });

  async function page(
    c: Context,
    viewer: Viewer | null,
    title: string,
    body: Child,
    status: 200 | 400 | 401 | 403 | 404 | 409 | 413 = 200,
    extra: { refreshMs?: number; charts?: boolean; header?: Child; fingerprint?: string } = {},
  ) {
    const url = new URL(c.req.url);
    const element = (
      <Layout
        title={title}
        asset={asset}
        viewer={viewer}
        now={deps.clock.now()}
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

  /** Who may look: a redirect to /login (or 401 for the JSON poll) when nobody signed in. */
  async function guard(c: Context, need: "read" | "write"): Promise<Viewer | Response> {
    const access = await resolveAccess(c, tokens);
    if (!access.ok) {
      if (access.reason === "forbidden") {
        return page(
          c,
          null,
          "Forbidden",
          <MessageBody
            title="Not for this token"
            message={`A ${access.role} token cannot use the dashboard: sign in with an admin or viewer token.`}
          />,
          403,
        );
      }
      if (access.reason === "stale") clearTokenCookie(c);
      if (c.req.path.endsWith(".json")) return c.json({ error: { code: "unauthorized", message: "sign in at /login", details: [] } }, 401);
      const url = new URL(c.req.url);
      const next = c.req.method === "GET" ? url.pathname + url.search : "/";
      return c.redirect(`/login?next=${encodeURIComponent(next)}${access.reason === "stale" ? "&expired=1" : ""}`, 303);
    }
    if (need === "write") {
      if (!isSameOrigin(c))
        return page(c, access.viewer, "Forbidden", <MessageBody title="Refused" message="This form came from another site." />, 403);
      if (!canWrite(access.viewer))
        return page(
          c,
          access.viewer,
          "Forbidden",
          <MessageBody title="Read-only" message="A viewer token may look but not change: sign in with an admin token." />,
          403,
        );
    }
    return access.viewer;
  }

  /** `?token=…` once: check it, keep it as the cookie, and drop it from the address bar. */
  async function tokenFromQuery(c: Context): Promise<Response | null> {
    const token = c.req.query("token");
    if (token === undefined) return null;
    const checked = await checkLoginToken(tokens, token);
    const url = new URL(c.req.url);
    url.searchParams.delete("token");
    if (!checked.ok)
      return page(c, null, "Sign in", <LoginBody next={url.pathname + url.search} error={checked.message} open={false} />, 401);
    setTokenCookie(c, token);
    return c.redirect(url.pathname + url.search, 303);
  }

  async function renderOverview(
    c: Context,
    viewer: Viewer,
    forms: { line?: FormState; sample?: FormState; open?: "line" | "sample"; status?: 200 | 400 | 404 | 409 } = {},
  ) {
    const o = await overview.load(parseHours(c.req.query("hours")));
    const bad = (o.counts.cooldown ?? 0) + (o.counts.degraded ?? 0);
    return page(
      c,
      viewer,
      bad > 0 ? `(${bad}) linewatch` : "linewatch",
      <>
        <Notice done={c.req.query("done")} name={c.req.query("name")} />
        <OverviewBody
          o={o}
          canWrite={canWrite(viewer)}
          lineForm={forms.line ?? emptyForm()}
          sampleForm={forms.sample ?? emptyForm()}
          open={forms.open}
        />
      </>,
      forms.status ?? 200,
      { refreshMs: parseRefresh(c.req.query("refresh")), charts: true, header: <Summary o={o} />, fingerprint: o.fingerprint },
    );
  }

  app.get(`${ASSET_PREFIX}:name`, gzip, (c) => {
    const found = loadAssets().get(c.req.param("name"));
    if (!found) return c.text("not found", 404);
    // The URL carries the content hash: cache for good when it matches, briefly otherwise.
    const immutable = c.req.query("v") === found.hash;
    return c.body(new Uint8Array(found.body), 200, {
      "content-type": found.type,
      "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
      "x-content-type-options": "nosniff",
    });
  });

  app.get("/", gzip, async (c) => {
    const fromQuery = await tokenFromQuery(c);
    if (fromQuery) return fromQuery;
    const viewer = await guard(c, "read");
    if (viewer instanceof Response) return viewer;
    return renderOverview(c, viewer);
  });

  /** The small endpoint the page polls: it fetches the panels again only when this changes. */
  app.get("/dashboard/state.json", async (c) => {
    const viewer = await guard(c, "read");
    if (viewer instanceof Response) return viewer;
    c.header("cache-control", "no-store");
    return c.json({ fingerprint: await overview.fingerprint(), now: deps.clock.now() });
  });

  /** The replay view: a GET form, so a result can be bookmarked; runs only once the form was sent. */
  app.get("/replay", gzip, async (c) => {
    const fromQuery = await tokenFromQuery(c);
    if (fromQuery) return fromQuery;
    const viewer = await guard(c, "read");
    if (viewer instanceof Response) return viewer;
    const snapshot = await engine.registry.get();
    const names = [...snapshot.lines.values()].map((l) => l.name).sort();
    const q = (k: string) => c.req.query(k) ?? "";
    const form: ReplayForm = { since: q("since"), from: q("from"), to: q("to"), line: q("line") || (names[0] ?? ""), policy: q("policy") };
    const sent = c.req.query("line") !== undefined;
    let report = null;
    let error: string | null = null;
    if (sent) {
      try {
        const policy = form.policy.trim() === "" ? undefined : (parseYaml(form.policy) as Record<string, unknown>);
        report = await runReplay(
          deps,
          snapshot,
          {
            ...(form.since ? { since: form.since } : {}),
            ...(form.from ? { from: form.from } : {}),
            ...(form.to ? { to: form.to } : {}),
            ...(policy !== undefined ? { policy } : {}),
            ...(form.line ? { timeline: form.line } : {}),
          },
          { signal: c.req.raw.signal },
        );
      } catch (e) {
        if (e instanceof ApiError) error = e.message;
        else if (e instanceof Error && e.name === "YAMLParseError") error = `policy: ${e.message.split("\n")[0]}`;
        else throw e;
      }
    }
    return page(c, viewer, "replay · linewatch", <ReplayBody form={form} lines={names} report={report} error={error} />, error ? 400 : 200);
  });

  app.get("/lines/:id", gzip, async (c) => {
    const fromQuery = await tokenFromQuery(c);
    if (fromQuery) return fromQuery;
    const viewer = await guard(c, "read");
    if (viewer instanceof Response) return viewer;
    const id = await resolveLineId(deps, engine, c.req.param("id"));
    const hours = parseHours(c.req.query("hours"));
    const fingerprint = await overview.fingerprint();
    const p = id ? await loadLinePage(deps, engine, api, id, hours) : null;
    if (!p)
      return page(c, viewer, "Not found", <MessageBody title="No such line" message={`There is no line ${c.req.param("id")}.`} />, 404);
    return page(
      c,
      viewer,
      `${p.line.name} · linewatch`,
      <>
        <Notice done={c.req.query("done")} name={c.req.query("name")} />
        <LinePageBody p={p} canWrite={canWrite(viewer)} now={deps.clock.now()} hours={hours} />
      </>,
      200,
      { refreshMs: parseRefresh(c.req.query("refresh")), charts: true, fingerprint },
    );
  });

  app.post("/dashboard/lines", formLimit, async (c) => {
    const viewer = await guard(c, "write");
    if (viewer instanceof Response) return viewer;
    const values = formValues(await c.req.parseBody());
    const parsed = parseLineForm(values);
    if (!parsed.ok) return renderOverview(c, viewer, { line: { values: echo(values), errors: parsed.errors }, open: "line", status: 400 });
    const created = await api.createLine(parsed.body);
    if (!created.ok) {
      const status = created.status === 404 || created.status === 409 ? created.status : 400;
      return renderOverview(c, viewer, {
        line: { values: echo(values), errors: apiErrors(created, parsed.toField) },
        open: "line",
        status,
      });
    }
    overview.invalidate();
    return c.redirect(withDone("/", "line-added", created.body.name), 303);
  });

  app.post("/dashboard/samples", formLimit, async (c) => {
    const viewer = await guard(c, "write");
    if (viewer instanceof Response) return viewer;
    const values = formValues(await c.req.parseBody());
    const parsed = parseSampleForm(values);
    if (!parsed.ok) return renderOverview(c, viewer, { sample: { values, errors: parsed.errors }, open: "sample", status: 400 });
    const created = await api.createSample(parsed.body);
    if (!created.ok) {
      const status = created.status === 404 || created.status === 409 ? created.status : 400;
      return renderOverview(c, viewer, { sample: { values, errors: apiErrors(created, parsed.toField) }, open: "sample", status });
    }
    overview.invalidate();
    return c.redirect(withDone("/", "sample-added", created.body.name), 303);
  });

  /** Drain, disable or re-enable: `op` is `<adminState>:<line name or id>` (one form serves every row's buttons). */
  app.post("/dashboard/admin", formLimit, async (c) => {
    const viewer = await guard(c, "write");
    if (viewer instanceof Response) return viewer;
    const values = formValues(await c.req.parseBody());
    const op = values.op ?? "";
    const state = op.slice(0, Math.max(0, op.indexOf(":")));
    const patch = LinePatchSchema.safeParse({ adminState: state });
    if (!patch.success)
      return page(c, viewer, "Bad request", <MessageBody title="Nothing changed" message={`Not an operation: ${op || "(none)"}.`} />, 400);
    const target = op.slice(state.length + 1);
    const id = await resolveLineId(deps, engine, target);
    if (!id) return page(c, viewer, "Not found", <MessageBody title="Nothing changed" message={`There is no line ${target}.`} />, 404);
    const changed = await api.patchLine(id, patch.data);
    if (!changed.ok)
      return page(
        c,
        viewer,
        "Nothing changed",
        <MessageBody title="Nothing changed" message={changed.error.message} />,
        changed.status === 404 ? 404 : 400,
      );
    overview.invalidate();
    return c.redirect(withDone(safeNext(values.next), state, changed.body.name), 303);
  });

  app.post("/dashboard/lines/:id/probe", formLimit, async (c) => {
    const viewer = await guard(c, "write");
    if (viewer instanceof Response) return viewer;
    const id = c.req.param("id");
    const probed = isUuid(id) ? await api.probeLine(id) : null;
    if (!probed?.ok) return page(c, viewer, "Not found", <MessageBody title="No such line" message={`There is no line ${id}.`} />, 404);
    overview.invalidate();
    const name = (await engine.registry.get()).lines.get(id)?.name ?? id;
    return c.redirect(withDone(`/lines/${id}`, "probed", name), 303);
  });

  app.get("/login", async (c) => {
    const open = await tokens.isOpen();
    const next = safeNext(c.req.query("next"));
    const error = c.req.query("expired") ? "That token is no longer valid: sign in again." : undefined;
    return page(c, null, "Sign in · linewatch", <LoginBody next={next} error={error} open={open} />, 200);
  });

  app.post("/login", formLimit, async (c) => {
    if (!isSameOrigin(c))
      return page(c, null, "Forbidden", <MessageBody title="Refused" message="This form came from another site." />, 403);
    const values = formValues(await c.req.parseBody());
    const next = safeNext(values.next);
    const checked = await checkLoginToken(tokens, (values.token ?? "").trim());
    if (!checked.ok) return page(c, null, "Sign in · linewatch", <LoginBody next={next} error={checked.message} open={false} />, 401);
    setTokenCookie(c, (values.token ?? "").trim());
    return c.redirect(next, 303);
  });

  app.post("/logout", formLimit, async (c) => {
    if (!isSameOrigin(c))
      return page(c, null, "Forbidden", <MessageBody title="Refused" message="This form came from another site." />, 403);
    clearTokenCookie(c);
    return c.redirect("/login", 303);
  });

  return app;
}
