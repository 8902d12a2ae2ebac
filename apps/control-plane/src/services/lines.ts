// How a line is created, changed, deleted and probed by hand: the checks, the write, and telling the
// engine. The API, the dashboard and the demo call these (STYLE 14).
import { isUuid, type LineCreate, type LinePatch, type LineResponse, type ProbeResultResponse } from "@linewatch/contract";
import { budgetFloorMs, type ProbeBudget } from "@linewatch/core";
import { deleteLine, getLine, getRouteRow, insertLine, type LineWrite, listLines, updateLine } from "@linewatch/db";
import { upstreamUrlProblem } from "@linewatch/router-client";
import type { AppDeps } from "../deps";
import type { Engine } from "../engine";
import { ApiError, NotFoundError, ValidationError } from "../errors";
import { sealHeaders } from "../line-headers";
import { afterWrite } from "./after-write";
import { duplicateName } from "./duplicate-name";
import { resultView } from "./line-views/probe-results";

/** The longest interval a probe budget may stretch a line's schedule to: a day (docs/api.md's probeIntervalSec bound). */
export const MAX_BUDGET_INTERVAL_MS = 86_400_000;

const lineNamed = (name: string | undefined) => `a line named ${JSON.stringify(name)} already exists`;

/**
 * docs/tables.md stretches the interval to keep probes within probeBudgetPct of dailyQuota; a budget of
 * less than one probe a day would stretch it past a day (or past what a date can hold), so the
 * pair is refused here, before anything is written, naming both fields.
 */
function checkBudget(budget: ProbeBudget): void {
  const floorMs = budgetFloorMs(budget, 1);
  if (floorMs <= MAX_BUDGET_INTERVAL_MS) return;
  const message = `dailyQuota × probeBudgetPct / 100 must allow at least one probe a day (an interval of at most ${MAX_BUDGET_INTERVAL_MS / 1000} s); got ${(budget.dailyQuota ?? 0) * (budget.probeBudgetPct / 100)}`;
  throw new ValidationError(`dailyQuota, probeBudgetPct: ${message}`, [
    { field: "dailyQuota", message },
    { field: "probeBudgetPct", message },
  ]);
}

export class LineService {
  constructor(
    private readonly deps: AppDeps,
    private readonly engine: Engine,
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  list(): Promise<LineResponse[]> {
    return listLines(this.db);
  }

  async get(id: string): Promise<LineResponse> {
    const line = isUuid(id) ? await getLine(this.db, id) : null;
    if (!line) throw new NotFoundError(`line ${id}`);
    return line;
  }

  async create(input: LineCreate): Promise<LineResponse> {
    checkBudget({ probeIntervalSec: input.probeIntervalSec, dailyQuota: input.dailyQuota ?? null, probeBudgetPct: input.probeBudgetPct });
    await this.checkRefs(input);
    const write: LineWrite = {
      name: input.name,
      tier: input.tier,
      protocol: input.protocol,
      baseUrl: input.baseUrl,
      model: input.model,
      apiKeyEnc: input.apiKey ? this.deps.secrets.encrypt(input.apiKey) : null,
      ...sealHeaders(this.deps.secrets, input.headers ?? {}),
      routes: input.routes,
      probeIntervalSec: input.probeIntervalSec,
      timeoutMs: input.timeoutMs ?? null,
      dailyQuota: input.dailyQuota ?? null,
      probeBudgetPct: input.probeBudgetPct,
      maxShare: input.maxShare ?? null,
      adminState: input.adminState,
    };
    const line = await insertLine(this.db, write).catch(duplicateName(lineNamed(input.name)));
    await afterWrite(this.deps.logger, "line created", () => this.engine.registryChanged(line.routes.map((r) => r.route)));
    return line;
  }

  /** A change of adminState (drain, disable, re-enable) goes through the health machine before the tables follow. */
  async update(id: string, patch: LinePatch): Promise<LineResponse> {
    const before = await this.get(id);
    checkBudget({
      probeIntervalSec: patch.probeIntervalSec ?? before.probeIntervalSec,
      dailyQuota: patch.dailyQuota === undefined ? before.dailyQuota : patch.dailyQuota,
      probeBudgetPct: patch.probeBudgetPct ?? before.probeBudgetPct,
    });
    await this.checkRefs(patch);
    const { apiKey, headers, ...rest } = patch;
    const write: Partial<LineWrite> = { ...rest };
    if (headers !== undefined) Object.assign(write, sealHeaders(this.deps.secrets, headers));
    if (apiKey !== undefined) write.apiKeyEnc = apiKey === null ? null : this.deps.secrets.encrypt(apiKey);
    const line = await updateLine(this.db, id, write, new Date(this.deps.clock.now())).catch(duplicateName(lineNamed(patch.name)));
    if (!line) throw new NotFoundError(`line ${id}`);
    const routes = [...new Set([...before.routes, ...line.routes].map((r) => r.route))];
    await afterWrite(this.deps.logger, "line changed", () =>
      line.adminState !== before.adminState
        ? this.engine.adminStateChanged(line.id, line.adminState, routes)
        : this.engine.registryChanged(routes),
    );
    return line;
  }

  /** Its memberships, health and probe results go with it; its events stay. */
  async remove(id: string): Promise<void> {
    const before = isUuid(id) ? await getLine(this.db, id) : null;
    if (!before || !(await deleteLine(this.db, id))) throw new NotFoundError(`line ${id}`);
    await afterWrite(this.deps.logger, "line deleted", () => this.engine.registryChanged(before.routes.map((r) => r.route)));
  }

  /** Probe the line now with every sample that applies; a result that could not be stored is a 503, not an empty answer. */
  async probe(id: string): Promise<{ name: string; results: ProbeResultResponse[] }> {
    const snapshot = await this.engine.registry.get();
    const line = isUuid(id) ? snapshot.lines.get(id) : undefined;
    if (!line) throw new NotFoundError(`line ${id}`);
    const { results, notStored } = await this.engine.prober.probeNow(id);
    if (notStored > 0) {
      // The upstream was asked, but nothing of it is on record: say so instead of an empty 200.
      throw new ApiError(
        503,
        "unavailable",
        `the line was probed, but ${notStored} of ${notStored + results.length} results could not be stored (the database is unavailable); nothing was recorded for them`,
      );
    }
    return { name: line.name, results: results.map((r) => resultView({ ...r, sampleName: snapshot.samples.get(r.sampleId)?.name ?? "" })) };
  }

  /** The upstream may be probed, and every route it joins exists (404 naming the field otherwise). */
  private async checkRefs(body: Pick<LinePatch, "routes" | "baseUrl">): Promise<void> {
    if (body.baseUrl) {
      const problem = upstreamUrlProblem(body.baseUrl, this.deps.config.allowUpstreamHosts);
      if (problem) throw ValidationError.field("baseUrl", problem);
    }
    for (const [i, m] of (body.routes ?? []).entries()) {
      if (!(await getRouteRow(this.db, m.route))) {
        throw NotFoundError.reference(`routes.${i}.route`, `route ${JSON.stringify(m.route)}`, "; create it with POST /v1/routes");
      }
    }
  }
}
