import { createRoute } from "@hono/zod-openapi";
import {
  IdParam,
  isUuid,
  type LineCreate,
  LineCreateSchema,
  LineListSchema,
  type LinePatch,
  LinePatchSchema,
  LineSchema,
} from "@linewatch/contract";
import { type AdminState, budgetFloorMs, type ProbeBudget } from "@linewatch/core";
import {
  deleteLine,
  errorSummary,
  getLine,
  getRouteRow,
  insertLine,
  isUniqueViolation,
  type LineWrite,
  listLines,
  updateLine,
} from "@linewatch/db";
import { upstreamUrlProblem } from "@linewatch/router-client";
import type { AppDeps } from "../../deps";
import { ConflictError, NotFoundError, ValidationError } from "../../errors";
import { sealHeaders } from "../../line-headers";
import { createRouter, errorResponses, json, jsonBody } from "../common";

const tags = ["lines"];

/** The longest interval a probe budget may stretch a line's schedule to: a day (SPEC §3's probeIntervalSec bound). */
export const MAX_BUDGET_INTERVAL_MS = 86_400_000;

export interface LineHooks {
  /** Called after a change that may alter the tables of these routes. */
  linesChanged(routes: string[]): Promise<void>;
  /** Drain, disable or re-enable: the health machine records it, then the tables follow. */
  adminStateChanged(lineId: string, adminState: AdminState, routes: string[]): Promise<void>;
}

export function lineRoutes(deps: AppDeps, hooks: LineHooks) {
  const app = createRouter();
  const db = deps.database.db;

  async function checkRefs(body: Pick<LinePatch, "routes" | "baseUrl">) {
    if (body.baseUrl) {
      const problem = upstreamUrlProblem(body.baseUrl, deps.config.allowUpstreamHosts);
      if (problem) throw ValidationError.field("baseUrl", problem);
    }
    for (const [i, m] of (body.routes ?? []).entries()) {
      if (!(await getRouteRow(db, m.route))) {
        throw NotFoundError.reference(`routes.${i}.route`, `route ${JSON.stringify(m.route)}`, "; create it with POST /v1/routes");
      }
    }
  }

  /**
   * SPEC §6 stretches the interval to keep probes within probeBudgetPct of dailyQuota; a budget of
   * less than one probe a day would stretch it past a day (or past what a date can hold), so the
   * pair is refused here, before anything is written, naming both fields.
   */
  function checkBudget(budget: ProbeBudget) {
    const floorMs = budgetFloorMs(budget, 1);
    if (floorMs <= MAX_BUDGET_INTERVAL_MS) return;
    const message = `dailyQuota × probeBudgetPct / 100 must allow at least one probe a day (an interval of at most ${MAX_BUDGET_INTERVAL_MS / 1000} s); got ${(budget.dailyQuota ?? 0) * (budget.probeBudgetPct / 100)}`;
    throw new ValidationError(`dailyQuota, probeBudgetPct: ${message}`, [
      { field: "dailyQuota", message },
      { field: "probeBudgetPct", message },
    ]);
  }

  /** A change that is stored stays stored: a hook that fails after it is logged (the next reconcile retries), never a 500. */
  async function afterWrite(what: string, apply: () => Promise<void>) {
    await apply().catch((error: unknown) =>
      deps.logger.error("a stored line change could not be applied yet", { what, error: errorSummary(error) }),
    );
  }

  const duplicateName = (name: string | undefined) =>
    new ConflictError(`a line named ${JSON.stringify(name)} already exists`, [{ field: "name", message: "already exists" }]);

  app.openapi(
    createRoute({
      method: "post",
      path: "/",
      tags,
      summary: "Register a line",
      request: jsonBody(LineCreateSchema),
      responses: { 201: json(LineSchema, "The line"), ...errorResponses },
    }),
    async (c) => {
      const body: LineCreate = c.req.valid("json");
      checkBudget({ probeIntervalSec: body.probeIntervalSec, dailyQuota: body.dailyQuota ?? null, probeBudgetPct: body.probeBudgetPct });
      await checkRefs(body);
      const write: LineWrite = {
        name: body.name,
        tier: body.tier,
        protocol: body.protocol,
        baseUrl: body.baseUrl,
        model: body.model,
        apiKeyEnc: body.apiKey ? deps.secrets.encrypt(body.apiKey) : null,
        ...sealHeaders(deps.secrets, body.headers ?? {}),
        routes: body.routes,
        probeIntervalSec: body.probeIntervalSec,
        timeoutMs: body.timeoutMs ?? null,
        dailyQuota: body.dailyQuota ?? null,
        probeBudgetPct: body.probeBudgetPct,
        maxShare: body.maxShare ?? null,
        adminState: body.adminState,
      };
      const line = await insertLine(db, write).catch((e: unknown) => {
        throw isUniqueViolation(e) ? duplicateName(body.name) : e;
      });
      await afterWrite("line created", () => hooks.linesChanged(line.routes.map((r) => r.route)));
      c.header("Location", `/v1/lines/${line.id}`);
      return c.json(line, 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/",
      tags,
      summary: "List lines",
      responses: { 200: json(LineListSchema, "All lines"), ...errorResponses },
    }),
    async (c) => c.json({ lines: await listLines(db) }, 200),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/{id}",
      tags,
      summary: "Get a line",
      request: { params: IdParam },
      responses: { 200: json(LineSchema, "The line"), ...errorResponses },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const line = isUuid(id) ? await getLine(db, id) : null;
      if (!line) throw new NotFoundError(`line ${id}`);
      return c.json(line, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "patch",
      path: "/{id}",
      tags,
      summary: "Change a line (including adminState: drain, disable, re-enable)",
      request: { params: IdParam, ...jsonBody(LinePatchSchema) },
      responses: { 200: json(LineSchema, "The changed line"), ...errorResponses },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const body: LinePatch = c.req.valid("json");
      const before = isUuid(id) ? await getLine(db, id) : null;
      if (!before) throw new NotFoundError(`line ${id}`);
      checkBudget({
        probeIntervalSec: body.probeIntervalSec ?? before.probeIntervalSec,
        dailyQuota: body.dailyQuota === undefined ? before.dailyQuota : body.dailyQuota,
        probeBudgetPct: body.probeBudgetPct ?? before.probeBudgetPct,
      });
      await checkRefs(body);
      const { apiKey, headers, ...rest } = body;
      const patch: Partial<LineWrite> = { ...rest } as Partial<LineWrite>;
      if (headers !== undefined) Object.assign(patch, sealHeaders(deps.secrets, headers));
      if (apiKey !== undefined) patch.apiKeyEnc = apiKey === null ? null : deps.secrets.encrypt(apiKey);
      const line = await updateLine(db, id, patch, new Date(deps.clock.now())).catch((e: unknown) => {
        throw isUniqueViolation(e) ? duplicateName(body.name) : e;
      });
      if (!line) throw new NotFoundError(`line ${id}`);
      const routes = [...new Set([...before.routes, ...line.routes].map((r) => r.route))];
      await afterWrite("line changed", () =>
        line.adminState !== before.adminState ? hooks.adminStateChanged(line.id, line.adminState, routes) : hooks.linesChanged(routes),
      );
      return c.json(line, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/{id}",
      tags,
      summary: "Delete a line (its memberships, health and probe results go with it; events stay)",
      request: { params: IdParam },
      responses: { 204: { description: "Deleted" }, ...errorResponses },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const before = isUuid(id) ? await getLine(db, id) : null;
      if (!before || !(await deleteLine(db, id))) throw new NotFoundError(`line ${id}`);
      await afterWrite("line deleted", () => hooks.linesChanged(before.routes.map((r) => r.route)));
      return c.body(null, 204);
    },
  );

  return app;
}
