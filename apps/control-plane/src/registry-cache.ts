import type { HealthPolicy, Line, Route, RouteMembership, Sample } from "@linewatch/core";
import {
  errorSummary,
  type LineRow,
  listLineVersions,
  listRouteRows,
  listSamples,
  listVersionedLineRows,
  type RouteRow,
  registryFingerprint,
  toLine,
  type VersionedLineRow,
} from "@linewatch/db";
import type { AppDeps } from "./deps";
import { openHeaders } from "./line-headers";

export interface CachedLine extends Line {
  /** Decrypted upstream key, for probes only: never serialised into a response. */
  apiKey: string | null;
  /** Decrypted header values, for probes and router tokens only (like apiKey). */
  headers: Record<string, string>;
  updatedAt: string;
}

export interface CachedRoute extends Route {
  /** The route's overrides of the health policy, as stored (checked when written; linePolicy checks them again). */
  policy: Partial<HealthPolicy> | null;
}

export interface RegistrySnapshot {
  lines: Map<string, CachedLine>;
  samples: Map<string, Sample>;
  routes: Map<string, CachedRoute>;
  loadedAt: number;
}

/**
 * What a change through the API touched: the routes it named (their lines, before and after, are
 * read again; a change that names none, e.g. a line on no route, reads everything), or "all".
 */
export type RegistryChange = { routes: readonly string[] } | "all";

/** Replicas tell each other that lines, samples or routes changed; the payload names the routes (JSON), empty: anything. */
export const REGISTRY_CHANNEL = "linewatch_registry";
/** While the database is unreachable, one reload attempt per this long at most. */
const RETRY_MS = 1_000;
/** However unchanged the fingerprint, the registry is read whole this often (a change made outside the API). */
const FULL_RELOAD_MS = 5 * 60_000;
/** NOTIFY payloads stop at 8000 bytes: a change naming more routes than fit is announced as "anything". */
const MAX_PAYLOAD = 7_000;

/** The order the database lists lines in (by name), for lines added by a partial reload. */
const byName = new Intl.Collator();

/** The change a registry notification announces (see changed()). */
export function parseRegistryChange(payload: string): RegistryChange {
  try {
    const parsed = JSON.parse(payload) as { routes?: unknown };
    if (Array.isArray(parsed.routes) && parsed.routes.every((r) => typeof r === "string")) return { routes: parsed.routes };
  } catch {
    // An empty or foreign payload: anything may have changed.
  }
  return "all";
}

function sameRow(a: LineRow, b: LineRow): boolean {
  for (const key of Object.keys(a) as (keyof LineRow)[]) {
    const x = a[key];
    const y = b[key];
    if (x === y) continue;
    if (x instanceof Date && y instanceof Date) {
      if (x.getTime() !== y.getTime()) return false;
    } else if (typeof x === "object" && typeof y === "object" && x !== null && y !== null) {
      if (JSON.stringify(x) !== JSON.stringify(y)) return false;
    } else return false;
  }
  return true;
}

/** A held line whose row version is the one read (its memberships are the ones read now). */
interface KeptLine {
  kept: CachedLine;
  held: { row: LineRow; version: string };
  routes: RouteMembership[];
}

const sameMemberships = (a: readonly RouteMembership[], b: readonly RouteMembership[]): boolean =>
  a.length === b.length && a.every((m, i) => m.route === b[i]?.route && m.weight === b[i]?.weight);

/**
 * The registry as the prober, the publisher and the table endpoint read it. Probing 1000 lines
 * must not re-read them per probe, and a database outage must not stop the table endpoint: the last
 * snapshot is served until a reload succeeds.
 *
 * Fresh after a change through this replica's API (`changed()`, which also tells the other replicas
 * over LISTEN/NOTIFY) or a notification from another replica; otherwise checked behind the last
 * snapshot once it is `ttlMs` old: reloaded when the registry's fingerprint moved (a notification
 * lost), else kept as it is (the same object, so what callers derived from it stays valid), and
 * reloaded whole at least every FULL_RELOAD_MS.
 *
 * A change that names its routes re-reads only their lines (10,000 lines over 100 routes: 100 rows,
 * not 10,000). A change that names none, with a snapshot held, reads each line's row version (its
 * xmin) and every membership, and the rows of only the lines whose version moved: reweighting 10,000
 * lines reads no line row (decoding 10,000 rows was most of such a reload). The whole read every
 * FULL_RELOAD_MS compares rows, not versions. A new snapshot keeps the very objects of the lines and
 * routes that did not change, so what callers derived from one line or route (the publisher's
 * per-route index) can be kept too.
 */
export class RegistryCache {
  private snapshot: RegistrySnapshot | null = null;
  /** Bumped by every invalidation: a load that started before one must not count as fresh. */
  private generation = 0;
  private snapshotGeneration = -1;
  /** What changed since the last load began: the routes named, or everything (also before the first load). */
  private pending: Set<string> | "all" = "all";
  /** The registry fingerprint read just before the snapshot's rows, and when the snapshot was last found current. */
  private fingerprint: string | null = null;
  private checkedAt = 0;
  /** When the registry was last read whole. */
  private fullAt = 0;
  /** One load at a time: a partial load builds on the snapshot the previous one left. */
  private loading: { generation: number; promise: Promise<RegistrySnapshot> } | null = null;
  private failing = false;
  private retryAt = 0;
  private unlisten: (() => Promise<void>) | null = null;
  /** The keys of the loads by their sealed form (AES-GCM: the same sealed text always opens to the same key). */
  private opened = new Map<string, string>();
  /** The row each cached line was made from, with its version (listLineVersions), to tell an unchanged line from a changed one. */
  private rowOf = new WeakMap<CachedLine, { row: LineRow; version: string }>();

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "secrets" | "logger">,
    private readonly ttlMs = 10_000,
  ) {}

  /** Follow the other replicas' changes. */
  async start(): Promise<void> {
    // A notification missed while the listener was reconnecting could be any change: reload.
    this.unlisten = await this.deps.database.listen(
      REGISTRY_CHANNEL,
      (payload) => this.invalidate(parseRegistryChange(payload)),
      () => this.invalidate(),
    );
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch((error: unknown) => this.deps.logger.debug("unlisten failed", errorSummary(error)));
    this.unlisten = null;
  }

  /** The next get() loads what changed again (and waits for it). */
  invalidate(change: RegistryChange = "all"): void {
    this.generation++;
    if (change === "all" || change.routes.length === 0) this.pending = "all";
    else if (this.pending !== "all") for (const route of change.routes) this.pending.add(route);
  }

  /** After a change through this replica's API: reload here, and tell the other replicas. */
  async changed(change: RegistryChange = "all"): Promise<void> {
    this.invalidate(change);
    let payload = change === "all" || change.routes.length === 0 ? "" : JSON.stringify({ routes: change.routes });
    if (Buffer.byteLength(payload) > MAX_PAYLOAD) payload = "";
    await this.deps.database
      .notify(REGISTRY_CHANNEL, payload)
      .catch((error: unknown) => this.deps.logger.warn("cannot tell the other replicas about a registry change", errorSummary(error)));
  }

  /** The snapshot get() would answer at once without a check (current and fresh); undefined otherwise. */
  now(): RegistrySnapshot | undefined {
    const snapshot = this.snapshot;
    if (snapshot && this.snapshotGeneration === this.generation && this.deps.clock.now() - this.checkedAt < this.ttlMs) return snapshot;
    return undefined;
  }

  async get(): Promise<RegistrySnapshot> {
    const now = this.deps.clock.now();
    const snapshot = this.snapshot;
    const current = this.snapshotGeneration === this.generation;
    if (snapshot && current && now - this.checkedAt < this.ttlMs) return snapshot;
    // The database is failing: serve what we have between attempts rather than wait on it.
    if (snapshot && this.failing && now < this.retryAt) return snapshot;
    if (!snapshot || !current) {
      try {
        return await this.reload();
      } catch (error) {
        if (!snapshot) throw error;
        return snapshot; // reload() has logged it
      }
    }
    // Only old: answer from the snapshot and check it behind the caller's back.
    this.check().catch(() => {}); // reload() logs its own failure
    return snapshot;
  }

  /** Whether the registry changed (one fingerprint query), reloading it if so: what get() starts for an old snapshot. */
  check(): Promise<RegistrySnapshot> {
    return this.reload({ ifChanged: true });
  }

  private reload(opts: { ifChanged?: boolean } = {}): Promise<RegistrySnapshot> {
    const generation = this.generation;
    if (this.loading?.generation === generation) return this.loading.promise;
    // After the load in flight (an older generation): it leaves the snapshot this one builds on.
    const before = this.loading?.promise.catch(() => {}) ?? Promise.resolve();
    const promise = before
      .then(() => this.load(opts.ifChanged ?? false))
      .then(
        (snapshot) => {
          if (this.failing) this.deps.logger.info("registry reloaded from the database");
          this.failing = false;
          return snapshot;
        },
        (error: unknown) => {
          if (!this.failing) {
            this.deps.logger.warn(
              this.snapshot
                ? "cannot reload the registry; serving the last registry snapshot until the database answers"
                : "cannot load the registry",
              errorSummary(error),
            );
          }
          this.failing = true;
          this.retryAt = this.deps.clock.now() + RETRY_MS;
          throw error;
        },
      );
    const entry = { generation, promise };
    this.loading = entry;
    void promise
      .finally(() => {
        if (this.loading === entry) this.loading = null;
      })
      .catch(() => {}); // the failure is the caller's (and logged above)
    return promise;
  }

  private async load(ifChanged: boolean): Promise<RegistrySnapshot> {
    const db = this.deps.database.db;
    // Everything invalidated up to now is this load's to read; a failed load leaves a whole reload due.
    const generation = this.generation;
    const pending = this.pending;
    this.pending = new Set();
    try {
      // Read before the rows: a change made meanwhile moves the next fingerprint, so it is never missed.
      const fingerprint = await registryFingerprint(db);
      const held = this.snapshot;
      const now = this.deps.clock.now();
      const dueWhole = now - this.fullAt >= FULL_RELOAD_MS;
      const nothingNamed = pending !== "all" && pending.size === 0;
      if (ifChanged && held && nothingNamed && fingerprint === this.fingerprint && !dueWhole) {
        this.checkedAt = now;
        return held;
      }
      // A moved fingerprint with no change named (a lost notification, an edit outside the API) reads everything.
      const partial = held && pending !== "all" && !nothingNamed && !dueWhole ? { held, routes: pending } : null;
      const ids = partial ? this.lineIdsOn(partial.held, partial.routes) : [];
      // Everything, with a snapshot held and no whole read due: each line's row version, and only the
      // rows whose version moved (a reweighting of 10,000 lines reads no line row).
      const byVersion = held && !partial && !dueWhole;
      const [lineRows, samples, routeRows] = await Promise.all([
        partial
          ? listVersionedLineRows(db, { routes: [...partial.routes], ids })
          : byVersion
            ? this.changedLineRows(held)
            : listVersionedLineRows(db, "all"),
        listSamples(db),
        listRouteRows(db),
      ]);
      const snapshot: RegistrySnapshot = {
        lines: partial ? this.patchLines(partial.held, ids, lineRows) : this.allLines(held, lineRows),
        samples: new Map(samples.map((s) => [s.id, s])),
        routes: this.routesOf(held, routeRows),
        loadedAt: now,
      };
      // Loads may end out of order: never replace a snapshot with an older one.
      if (generation >= this.snapshotGeneration) {
        this.snapshot = snapshot;
        this.snapshotGeneration = generation;
        this.fingerprint = fingerprint;
        this.checkedAt = now;
        if (!partial && !byVersion) this.fullAt = now; // a read by versions is not the whole read that trusts none
      }
      return snapshot;
    } catch (error) {
      this.pending = "all";
      throw error;
    }
  }

  /** The ids of the held lines on these routes: re-read too, so a line that left them (or was deleted) is seen to. */
  private lineIdsOn(held: RegistrySnapshot, routes: Set<string>): string[] {
    const ids: string[] = [];
    for (const line of held.lines.values()) if (line.routes.some((m) => routes.has(m.route))) ids.push(line.id);
    return ids;
  }

  /**
   * Every line, by name: the held line where its row version is the one held (with the memberships
   * read now), else its row read again. A line deleted between the two reads is left out.
   */
  private async changedLineRows(held: RegistrySnapshot): Promise<(VersionedLineRow | KeptLine)[]> {
    const db = this.deps.database.db;
    const versions = await listLineVersions(db);
    const changed: string[] = [];
    const out: (VersionedLineRow | KeptLine | string)[] = versions.map((v) => {
      const old = held.lines.get(v.id);
      const was = old && this.rowOf.get(old);
      if (old && was && was.version === v.version) return { kept: old, held: was, routes: v.routes };
      changed.push(v.id);
      return v.id;
    });
    if (changed.length === 0) return out as KeptLine[];
    const read = new Map<string, VersionedLineRow>();
    for (const r of await listVersionedLineRows(db, { only: changed })) read.set(r.row.id, r);
    const byId = new Map(versions.map((v) => [v.id, v.routes]));
    return out.flatMap((item) => {
      if (typeof item !== "string") return [item];
      const r = read.get(item);
      return r ? [{ ...r, routes: byId.get(item) ?? [] }] : [];
    });
  }

  private allLines(held: RegistrySnapshot | null, rows: (VersionedLineRow | KeptLine)[]): Map<string, CachedLine> {
    const lines = new Map<string, CachedLine>();
    const opened = new Map<string, string>();
    for (const r of rows) {
      if ("kept" in r) lines.set(r.kept.id, this.keep(r, opened));
      else lines.set(r.row.id, this.lineOf(r, held?.lines.get(r.row.id), opened));
    }
    this.opened = opened;
    return lines;
  }

  /** The held lines with those of the named routes (`ids`: the held ones, so lines that left them are seen to) read again. */
  private patchLines(held: RegistrySnapshot, ids: string[], rows: (VersionedLineRow | KeptLine)[]): Map<string, CachedLine> {
    const lines = new Map(held.lines);
    const read = new Set(rows.map((r) => ("kept" in r ? r.kept.id : r.row.id)));
    for (const id of ids) if (!read.has(id)) lines.delete(id); // deleted
    let added = false;
    for (const r of rows) {
      if ("kept" in r) {
        lines.set(r.kept.id, this.keep(r, this.opened));
        continue;
      }
      const old = held.lines.get(r.row.id);
      if (!old) added = true;
      lines.set(r.row.id, this.lineOf(r, old, this.opened));
    }
    // A line already held keeps its place; a new one goes where a full load would list it (by name).
    return added ? new Map([...lines].sort(([, a], [, b]) => byName.compare(a.name, b.name))) : lines;
  }

  /** A held line whose row is the same: itself when its memberships are the same too (its key stays opened). */
  private keep({ kept, held, routes }: KeptLine, opened: Map<string, string>): CachedLine {
    if (held.row.apiKeyEnc && kept.apiKey !== null) opened.set(held.row.apiKeyEnc, kept.apiKey);
    if (sameMemberships(kept.routes, routes)) {
      this.rowOf.set(kept, held); // the same content, maybe under a new version (a write that changed nothing)
      return kept;
    }
    // Only its memberships moved (a reweighting): the same key and headers objects.
    const line: CachedLine = { ...kept, routes };
    this.rowOf.set(line, held);
    return line;
  }

  /**
   * The held line itself when its row and memberships are the same; else a new one (its key opened
   * once). Rows read whole are compared whole (the whole read every FULL_RELOAD_MS trusts no version).
   */
  private lineOf(read: VersionedLineRow, old: CachedLine | undefined, opened: Map<string, string>): CachedLine {
    const { row, version, routes } = read;
    const was = old && this.rowOf.get(old);
    if (old && was && sameRow(was.row, row)) {
      return this.keep({ kept: old, held: { row, version }, routes }, opened);
    }
    const oldRow = was?.row;
    let apiKey: string | null = null;
    if (row.apiKeyEnc) {
      // A sealed key read before opens to the same key: 10,000 lines reload without 10,000 decryptions.
      apiKey = this.opened.get(row.apiKeyEnc) ?? null;
      if (apiKey === null) {
        try {
          apiKey = this.deps.secrets.decrypt(row.apiKeyEnc);
        } catch (error) {
          // Probes then go without a key and fail visibly (401), instead of the control plane stopping.
          this.deps.logger.error("cannot decrypt a line's API key", { line: row.name, ...errorSummary(error) });
        }
      }
      if (apiKey !== null) opened.set(row.apiKeyEnc, apiKey);
    }
    let headers: Record<string, string> = {};
    if (old && oldRow && oldRow.headersEnc === row.headersEnc && JSON.stringify(oldRow.headers) === JSON.stringify(row.headers)) {
      headers = old.headers; // the same sealed headers: the same object, opened once
    } else {
      try {
        headers = openHeaders(this.deps.secrets, row);
      } catch (error) {
        // As for the key: probes go without the headers and fail visibly.
        this.deps.logger.error("cannot decrypt a line's headers", { line: row.name, ...errorSummary(error) });
      }
    }
    const line: CachedLine = { ...toLine(row, routes), apiKey, headers };
    this.rowOf.set(line, { row, version });
    return line;
  }

  private routesOf(held: RegistrySnapshot | null, rows: RouteRow[]): Map<string, CachedRoute> {
    return new Map<string, CachedRoute>(
      rows.map((r) => {
        const route: CachedRoute = {
          name: r.name,
          freeShareCap: r.freeShareCap,
          onAllDown: r.onAllDown as Route["onAllDown"],
          createdAt: r.createdAt.toISOString(),
          policy: r.policy ?? null,
        };
        const old = held?.routes.get(r.name);
        const same =
          old &&
          old.freeShareCap === route.freeShareCap &&
          old.onAllDown === route.onAllDown &&
          old.createdAt === route.createdAt &&
          JSON.stringify(old.policy) === JSON.stringify(route.policy);
        return [r.name, same ? old : route];
      }),
    );
  }
}
