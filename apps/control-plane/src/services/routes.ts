// How a route is created, changed and deleted: the policy check, the write, telling the engine, and
// the route as the API shows it (its lines and warnings).
import type { RouteCreate, RoutePatch, RouteResponse } from "@linewatch/contract";
import {
  type AdminState,
  applicableSamples,
  checkRouteOverrides,
  OVERRIDE_FIELDS,
  routeWarnings,
  type Tier,
  unprobedKind,
} from "@linewatch/core";
import {
  deleteRoute,
  getRouteRow,
  healthOfLines,
  insertRoute,
  listRouteRows,
  type RouteRow,
  routeMembers,
  routeReferences,
  updateRoute,
} from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { Engine } from "../engine";
import { ConflictError, NotFoundError, ValidationError } from "../errors";
import { duplicateName } from "./duplicate-name";

const notFound = (name: string) => new NotFoundError(`route ${JSON.stringify(name)}`);

/** A policy override must name known thresholds with usable values (core checkRouteOverrides); the route's own freeShareCap is a field. */
function checkPolicy(policy: Record<string, number> | null | undefined): void {
  if (!policy) return;
  const checked = checkRouteOverrides(policy);
  if (checked.ok) return;
  if (checked.error.kind === "unknown") {
    const { fields } = checked.error;
    throw new ValidationError(
      `policy.${fields[0]}: unknown threshold (known: ${OVERRIDE_FIELDS.join(", ")})`,
      fields.map((k) => ({ field: `policy.${k}`, message: "unknown threshold" })),
    );
  }
  const details = checked.error.problems;
  throw new ValidationError(`${details[0]?.field}: ${details[0]?.message}`, details);
}

export class RouteService {
  constructor(
    private readonly deps: AppDeps,
    private readonly engine: Engine,
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  async list(): Promise<RouteResponse[]> {
    return Promise.all((await listRouteRows(this.db)).map((row) => this.describe(row)));
  }

  async get(name: string): Promise<RouteResponse> {
    const row = await getRouteRow(this.db, name);
    if (!row) throw notFound(name);
    return this.describe(row);
  }

  async create(input: RouteCreate): Promise<RouteResponse> {
    checkPolicy(input.policy);
    const row = await insertRoute(this.db, { ...input, policy: input.policy ?? null }).catch(
      duplicateName(`a route named ${JSON.stringify(input.name)} already exists`),
    );
    await this.changed(row.name);
    return this.describe(row);
  }

  async update(name: string, patch: RoutePatch): Promise<RouteResponse> {
    checkPolicy(patch.policy);
    const row = await updateRoute(this.db, name, patch, new Date(this.deps.clock.now()));
    if (!row) throw notFound(name);
    await this.changed(name);
    return this.describe(row);
  }

  /** A route still used by lines or samples is a 409 unless `cascade` removes it from them too. */
  async remove(name: string, cascade: boolean): Promise<void> {
    if (!(await getRouteRow(this.db, name))) throw notFound(name);
    if (!cascade) {
      const refs = await routeReferences(this.db, name);
      if (refs.lines.length + refs.samples.length > 0) {
        throw new ConflictError(`route ${JSON.stringify(name)} is still used; remove it from its lines and samples or pass ?cascade=true`, [
          ...refs.lines.map((l) => ({ field: "lines", message: l })),
          ...refs.samples.map((s) => ({ field: "samples", message: s })),
        ]);
      }
    }
    if (!(await deleteRoute(this.db, name, cascade))) throw notFound(name);
    await this.changed(name);
  }

  /** The route's lines may have changed (a new policy, a removed membership): reload them, reconcile the prober, republish. */
  private changed(name: string): Promise<void> {
    return this.engine.registryChanged([name], { reconcile: true });
  }

  private async describe(row: RouteRow): Promise<RouteResponse> {
    const members = await routeMembers(this.db, row.name);
    // Which members no probe has judged (docs/health.md#new-lines): a line without a health row is unprobed.
    const snapshot = await this.engine.registry.get();
    const states = new Map(
      (
        await healthOfLines(
          this.db,
          members.map((m) => m.id),
        )
      ).map((h) => [h.lineId, h.state]),
    );
    const unprobed = (id: string) => {
      const line = snapshot.lines.get(id);
      const samples = line ? applicableSamples(line, snapshot.samples.values()).length : 1;
      return unprobedKind(states.get(id) ?? "unprobed", samples);
    };
    return {
      name: row.name,
      freeShareCap: row.freeShareCap,
      onAllDown: row.onAllDown,
      policy: row.policy ?? null,
      lines: members.map(({ maxShare: _m, protocol: _p, ...m }) => m),
      warnings: routeWarnings(
        members.map((m) => {
          const kind = unprobed(m.id);
          return {
            name: m.name,
            tier: m.tier as Tier,
            maxShare: m.maxShare,
            adminState: m.adminState as AdminState,
            protocol: m.protocol,
            ...(kind ? { unprobed: kind } : {}),
          };
        }),
        { freeShareCap: row.freeShareCap },
      ).map((w) => w.message),
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}
