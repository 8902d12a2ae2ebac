import { listPublishedTables, publishedTablesNewerThan } from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { ServedTables } from "./served-tables";

/** The channel every publish NOTIFYs with its route (writePublishedTables sends it in the publishing transaction). */
export const TABLES_CHANNEL = "linewatch_tables";

/**
 * Keeps this replica's served tables up with what the database holds, whichever replica published:
 * everything at start, the routes each NOTIFY names, everything again after the listener reconnects.
 */
export class TableSync {
  private unlisten: (() => Promise<void>) | null = null;
  /** Routes announced by NOTIFY and not read yet: a burst of publishes is read in one query. */
  private readonly announced = new Set<string>();
  private reading: Promise<void> | null = null;

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "logger">,
    private readonly served: ServedTables,
  ) {}

  async start(): Promise<void> {
    this.served.take(await listPublishedTables(this.deps.database.db));
    this.unlisten = await this.deps.database.listen(
      TABLES_CHANNEL,
      (route) => this.announce(route),
      // Back after the listener lost its connection: another replica may have published meanwhile.
      () => void this.reloadAll(),
    );
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch(() => {});
  }

  private announce(route: string): void {
    this.announced.add(route);
    if (this.reading) return;
    // After the current turn, so the notifications of one commit are read together.
    this.reading = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.readAnnounced())
      .finally(() => {
        this.reading = null;
        if (this.announced.size > 0) this.announce([...this.announced][0] as string);
      });
  }

  private async readAnnounced(): Promise<void> {
    const routes = [...this.announced];
    this.announced.clear();
    const known = routes.map((route) => ({ route, version: this.served.version(route) ?? 0 }));
    try {
      this.served.take(await publishedTablesNewerThan(this.deps.database.db, known));
    } catch (error) {
      this.deps.logger.warn("cannot reload tables after a notification", { routes, error: String(error) });
    }
  }

  private async reloadAll(): Promise<void> {
    try {
      this.served.take(await listPublishedTables(this.deps.database.db));
    } catch (error) {
      this.deps.logger.warn("cannot reload the tables after the listener reconnected", { error: String(error) });
    }
  }
}
