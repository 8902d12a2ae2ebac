import type { AdminState, LiveEvidence } from "@linewatch/core";
import {
  type Database,
  deleteOldLineOutcomes,
  deleteOldProbeResults,
  deleteOldWebhookDeliveries,
  events,
  lineOutcomes,
  listRouteRows,
  probeResults,
  REWRITTEN_TABLES,
  releaseAllClaims,
  releaseAllWebhookClaims,
  releaseClaimsOf,
  releaseWebhookClaimsOf,
  type StoredProbeResult,
  vacuumTables,
  webhookDeliveries,
} from "@linewatch/db";
import { Registry } from "prom-client";
import type { AppDeps } from "./deps";
import { HealthService } from "./health/health-service";
import { sealLegacyHeaders } from "./line-headers";
import { createLiveMetrics } from "./live/live-metrics";
import { LiveService } from "./live/live-service";
import { createMetrics, type Metrics, readScrapeState, readWebhookScrape } from "./metrics";
import { Prober } from "./prober/prober";
import { RegistryCache } from "./registry-cache";
import { TablePublisher } from "./tables/publisher";
import { WebhookWorker } from "./webhooks/delivery-worker";

/** The running parts behind the API: registry cache, prober, health machine shell, table publisher. */
export class Engine {
  readonly registry: RegistryCache;
  readonly publisher: TablePublisher;
  readonly health: HealthService;
  readonly prober: Prober;
  readonly metrics: Metrics;
  readonly live: LiveService;
  /** Webhook deliveries: the outbox fanned out to the sinks and sent (webhooks/delivery-worker.ts). */
  readonly webhooks: WebhookWorker;
  /**
   * The fusion seam (issue 12): called with the live evidence of a line after every outcome report
   * that touched it, with the confirming probes when the verdict was suspect. A no-op until the
   * health machine counts live evidence next to probes.
   */
  /** Live evidence goes into the line's health next to its probes (docs/live-evidence.md); replaceable in tests. */
  onLiveEvidence: (lineId: string, evidence: LiveEvidence) => Promise<void> | void = (lineId, evidence) =>
    this.health.applyLive(lineId, evidence);

  constructor(
    readonly deps: AppDeps,
    rng: () => number = Math.random,
  ) {
    this.registry = new RegistryCache(deps);
    this.publisher = new TablePublisher(deps, this.registry);
    this.health = new HealthService(deps, this.registry, this.publisher);
    // Gauges of what the database holds are read at scrape time, so every replica reports the same.
    this.metrics = createMetrics(new Registry(), {
      state: () => readScrapeState(deps.database),
      webhooks: () => readWebhookScrape(deps.database),
      inFlight: () => this.prober.stats().inFlight,
      healthFaults: () => this.health.faults.counts(),
      now: () => deps.clock.now(),
      logger: deps.logger,
    });
    const onResult = async (r: StoredProbeResult) => {
      this.metrics.observeProbe(r, await this.registry.get());
      await this.health.applyProbe(r);
    };
    this.prober = new Prober(deps, this.registry, { onResult, onStart: (lateMs) => this.metrics.observeLateness(lateMs) }, rng);
    this.webhooks = new WebhookWorker(deps, this.registry, this.prober.replica, rng);
    this.live = new LiveService(deps, {
      registry: this.registry,
      probeNow: async (lineId) => (await this.prober.probeNow(lineId)).results,
      metrics: createLiveMetrics(this.metrics.registry),
      onEvidence: (lineId, evidence) => this.onLiveEvidence(lineId, evidence),
    });
  }

  async start(): Promise<void> {
    await this.registry.start();
    await this.publisher.start();
    const sealed = await sealLegacyHeaders(this.deps.database.db, this.deps.secrets);
    if (sealed.length > 0) this.deps.logger.info("sealed header values stored in the clear by an earlier version", { lines: sealed });
    // Restarted (e.g. after kill -9): the claims of its previous run are dead, take them back now.
    // The embedded database is one process's: every claim in it is a previous run's. On PostgreSQL,
    // those held under this replica's id, and those of replicas on this host whose process is gone
    // (whatever their id: restart-claims.ts); other hosts' dead replicas go through the heartbeats,
    // which take REPLICA_STALE_MS and a steady stale period of this replica's own.
    const db = this.deps.database.db;
    const embedded = this.deps.database.driver === "pglite";
    const released =
      (embedded ? await releaseAllClaims(db) : await releaseClaimsOf(db, this.prober.replica)) +
      (embedded ? await releaseAllWebhookClaims(db) : await releaseWebhookClaimsOf(db, this.prober.replica)) +
      (embedded ? 0 : await this.prober.takeOverGone());
    if (released > 0)
      this.deps.logger.info("released the claims of this replica's previous run", { replica: this.prober.replica, released });
    await this.prober.heartbeat();
    await this.prober.reconcile();
    // Tables reflect the registry as it is now (e.g. lines added while this replica was down).
    await this.publisher.recompute(
      (await listRouteRows(this.deps.database.db)).map((r) => r.name),
      { reason: "start-up", probeIds: [] },
    );
  }

  /** One scheduler tick: due probes out, due health timers applied. */
  async tick(): Promise<void> {
    await this.prober.runDue();
    await this.health.runTicks();
  }

  /** After the registry changed through this replica's API. */
  async registryChanged(routes: string[], opts: { reconcile?: boolean } = {}): Promise<void> {
    // The routes a change names are the ones whose lines it can have touched (their lines before and after).
    await this.registry.changed({ routes });
    if (opts.reconcile !== false) await this.prober.reconcile();
    await this.publisher.recompute(routes, { reason: "registry change", probeIds: [] });
  }

  async adminStateChanged(lineId: string, adminState: AdminState, routes: string[]): Promise<void> {
    await this.registry.changed({ routes });
    await this.health.applyAdmin(lineId, adminState);
    await this.prober.reconcile();
    await this.publisher.recompute(routes, { reason: `admin: ${adminState}`, probeIds: [] });
  }

  /**
   * Retention: delete old probe results in small batches so probes are never blocked for long. On
   * the embedded database the space they held is then vacuumed for reuse (see vacuumEmbedded).
   */
  async pruneProbeResults(batch = 1000): Promise<number> {
    const total = await this.deleteInBatches(deleteOldProbeResults, batch);
    if (total > 0) await this.vacuumEmbedded([probeResults]);
    return total;
  }

  /** Retention of live outcome windows (docs/live-evidence.md), on the same clock and batches as probe results. */
  async pruneLineOutcomes(batch = 1000): Promise<number> {
    const total = await this.deleteInBatches(deleteOldLineOutcomes, batch);
    if (total > 0) await this.vacuumEmbedded([lineOutcomes]);
    return total;
  }

  /** Retention of delivered and dead webhook deliveries (their counts stay on the sink). */
  async pruneWebhookDeliveries(batch = 1000): Promise<number> {
    const total = await this.deleteInBatches(deleteOldWebhookDeliveries, batch);
    // Each event's outbox mark is cleared once: the embedded database reclaims those rows here too.
    await this.vacuumEmbedded([webhookDeliveries, events]);
    return total;
  }

  /** Rows older than the retention age, `batch` at a time, yielding between batches. */
  private async deleteInBatches(del: (db: Database["db"], before: Date, batch: number) => Promise<number>, batch: number) {
    const before = new Date(this.deps.clock.now() - this.deps.config.retentionDays * 86_400_000);
    let total = 0;
    for (;;) {
      const n = await del(this.deps.database.db, before, batch);
      total += n;
      if (n < batch) break;
      await new Promise((r) => setImmediate(r));
    }
    return total;
  }

  /**
   * PGlite runs no autovacuum: without this, each probe's schedule and health updates leave dead
   * rows that are never reclaimed, and the data directory grows for as long as the control plane
   * runs. PostgreSQL's autovacuum does it there, so this does nothing on PostgreSQL.
   */
  async vacuumEmbedded(tables = REWRITTEN_TABLES): Promise<boolean> {
    if (this.deps.database.driver !== "pglite") return false;
    await vacuumTables(this.deps.database.db, tables);
    return true;
  }

  async stop(): Promise<void> {
    await this.live.settled();
    await this.prober.close();
    await this.webhooks.close();
    await this.publisher.stop();
    await this.registry.stop();
  }
}
