// A line's page, and the buttons on it and on the overview: drain, disable, enable, probe now.
import { LinePatchSchema } from "@linewatch/contract";
import type { Hono, MiddlewareHandler } from "hono";
import type { AuthEnv } from "../auth";
import type { AppDeps } from "../deps";
import { ApiError } from "../errors";
import type { Services } from "../services/index";
import { formValues } from "./forms";
import { type Pages, parseHours, parseRefresh, withDone } from "./pages";
import { canWrite, safeNext } from "./session";
import { Notice } from "./views/layout";
import { LinePageBody } from "./views/line-page";

export function lineRoutes(app: Hono<AuthEnv>, deps: Pick<AppDeps, "clock">, services: Services, pages: Pages, gzip: MiddlewareHandler) {
  const { views } = services;

  app.get("/lines/:id", gzip, async (c) => {
    const viewer = await pages.reader(c);
    if (viewer instanceof Response) return viewer;
    const id = await views.resolveId(c.req.param("id"));
    const hours = parseHours(c.req.query("hours"));
    const fingerprint = await views.overview.fingerprint();
    const p = id ? await views.page(id, hours) : null;
    if (!p) return pages.message(c, viewer, "Not found", "No such line", `There is no line ${c.req.param("id")}.`, 404);
    const body = (
      <>
        <Notice done={c.req.query("done")} name={c.req.query("name")} />
        <LinePageBody p={p} canWrite={canWrite(viewer)} now={deps.clock.now()} hours={hours} />
      </>
    );
    return pages.page(c, viewer, `${p.line.name} · linewatch`, body, 200, {
      refreshMs: parseRefresh(c.req.query("refresh")),
      charts: true,
      fingerprint,
    });
  });

  /** Drain, disable or re-enable: `op` is `<adminState>:<line name or id>` (one form serves every row's buttons). */
  app.post("/dashboard/admin", pages.formLimit, async (c) => {
    const viewer = await pages.guard(c, "write");
    if (viewer instanceof Response) return viewer;
    const values = formValues(await c.req.parseBody());
    const op = values.op ?? "";
    const state = op.slice(0, Math.max(0, op.indexOf(":")));
    const patch = LinePatchSchema.safeParse({ adminState: state });
    if (!patch.success) return pages.message(c, viewer, "Bad request", "Nothing changed", `Not an operation: ${op || "(none)"}.`, 400);
    const target = op.slice(state.length + 1);
    const id = await views.resolveId(target);
    if (!id) return pages.message(c, viewer, "Not found", "Nothing changed", `There is no line ${target}.`, 404);
    try {
      const changed = await services.lines.update(id, patch.data);
      views.overview.invalidate();
      return c.redirect(withDone(safeNext(values.next), state, changed.name), 303);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return pages.message(c, viewer, "Nothing changed", "Nothing changed", error.message, error.status === 404 ? 404 : 400);
    }
  });

  app.post("/dashboard/lines/:id/probe", pages.formLimit, async (c) => {
    const viewer = await pages.guard(c, "write");
    if (viewer instanceof Response) return viewer;
    const id = c.req.param("id");
    try {
      const probed = await services.lines.probe(id);
      views.overview.invalidate();
      return c.redirect(withDone(`/lines/${id}`, "probed", probed.name), 303);
    } catch (error) {
      // Unknown, or probed but not stored: either way there is nothing to show of it.
      if (!(error instanceof ApiError)) throw error;
      return pages.message(c, viewer, "Not found", "No such line", `There is no line ${id}.`, 404);
    }
  });
}
