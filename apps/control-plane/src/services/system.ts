// What the service endpoints report: readiness (the database answers; the health machine's faults) and
// this replica's metrics.
import type { AppDeps } from "../deps";
import type { Engine } from "../engine";
import type { HealthFaultCounts } from "../health/health-faults";

export type Readiness = { ready: true; health: HealthFaultCounts } | { ready: false; database: string; health: HealthFaultCounts };

export class SystemService {
  constructor(
    private readonly deps: AppDeps,
    private readonly engine: Engine,
  ) {}

  async readiness(): Promise<Readiness> {
    try {
      await this.deps.database.ping();
      return { ready: true, health: this.engine.health.faults.counts() };
    } catch (error) {
      return { ready: false, database: String(error), health: this.engine.health.faults.counts() };
    }
  }

  /** The Prometheus exposition of this replica's registry. */
  async metrics(): Promise<{ body: string; contentType: string }> {
    const { registry } = this.engine.metrics;
    return { body: await registry.metrics(), contentType: registry.contentType };
  }
}
