import type { HealthPolicy, Line, Route, Sample } from "@linewatch/core";
import { errorSummary, listLineRows, listRouteRows, listSamples, registryFingerprint, toLine } from "@linewatch/db";
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

/** Replicas tell each other that lines, samples or routes changed (payload unused). */
export const REGISTRY_CHANNEL = "linewatch_registry";
/** While the database is unreachable, one reload attempt per this long at most. */
const RETRY_MS = 1_000;
/** However unchanged the fingerprint, the registry is read whole this often (a change made outside the API). */
const FULL_RELOAD_MS = 5 * 60_000;

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
 */
export class RegistryCache {
  private snapshot: RegistrySnapshot | null = null;
  /** Bumped by every invalidation: a load that started before one must not count as fresh. */
  private generation = 0;
  private snapshotGeneration = -1;
  /** The registry fingerprint read just before the snapshot's rows, and when the snapshot was last found current. */
  private fingerprint: string | null = null;
  private checkedAt = 0;
  private loading: { generation: number; promise: Promise<RegistrySnapshot> } | null = null;
  private failing = false;
  private retryAt = 0;
  private unlisten: (() => Promise<void>) | null = null;
  /** The keys of the last load by their sealed form (AES-GCM: the same sealed text always opens to the same key). */
  private opened = new Map<string, string>();

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "secrets" | "logger">,
    private readonly ttlMs = 10_000,
  ) {}

  /** Follow the other replicas' changes. */
  async start(): Promise<void> {
    // A notification missed while the listener was reconnecting could be any change: reload.
    this.unlisten = await this.deps.database.listen(
      REGISTRY_CHANNEL,
      () => this.invalidate(),
      () => this.invalidate(),
    );
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch((error: unknown) => this.deps.logger.debug("unlisten failed", errorSummary(error)));
    this.unlisten = null;
  }

  /** The next get() loads the registry again (and waits for it). */
  invalidate(): void {
    this.generation++;
  }

  /** After a change through this replica's API: reload here, and tell the other replicas. */
  async changed(): Promise<void> {
    this.invalidate();
    await this.deps.database
      .notify(REGISTRY_CHANNEL, "")
      .catch((error: unknown) => this.deps.logger.warn("cannot tell the other replicas about a registry change", errorSummary(error)));
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
    const promise = this.load(generation, opts.ifChanged ?? false).then(
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

  private async load(generation: number, ifChanged: boolean): Promise<RegistrySnapshot> {
    const db = this.deps.database.db;
    // Read before the rows: a change made meanwhile moves the next fingerprint, so it is never missed.
    const fingerprint = await registryFingerprint(db);
    const held = this.snapshot;
    const now = this.deps.clock.now();
    if (
      ifChanged &&
      held &&
      this.snapshotGeneration === generation &&
      fingerprint === this.fingerprint &&
      now - held.loadedAt < FULL_RELOAD_MS
    ) {
      this.checkedAt = now;
      return held;
    }
    const [lineRows, samples, routeRows] = await Promise.all([listLineRows(db), listSamples(db), listRouteRows(db)]);
    const lines = new Map<string, CachedLine>();
    const opened = new Map<string, string>();
    for (const { row, routes } of lineRows) {
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
      try {
        headers = openHeaders(this.deps.secrets, row);
      } catch (error) {
        // As for the key: probes go without the headers and fail visibly.
        this.deps.logger.error("cannot decrypt a line's headers", { line: row.name, ...errorSummary(error) });
      }
      lines.set(row.id, { ...toLine(row, routes), apiKey, headers });
    }
    this.opened = opened;
    const routes = new Map<string, CachedRoute>(
      routeRows.map((r) => [
        r.name,
        {
          name: r.name,
          freeShareCap: r.freeShareCap,
          onAllDown: r.onAllDown as Route["onAllDown"],
          createdAt: r.createdAt.toISOString(),
          policy: r.policy ?? null,
        },
      ]),
    );
    const snapshot = { lines, samples: new Map(samples.map((s) => [s.id, s])), routes, loadedAt: this.deps.clock.now() };
    // Loads may end out of order: never replace a snapshot with an older one.
    if (generation >= this.snapshotGeneration) {
      this.snapshot = snapshot;
      this.snapshotGeneration = generation;
      this.fingerprint = fingerprint;
      this.checkedAt = snapshot.loadedAt;
    }
    return snapshot;
  }
}
