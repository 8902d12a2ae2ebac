// The last good tables on disk: one write at a time, the latest state wins (a write asked for while
// one runs is done once after it, with whatever is current then).
import type { Logger } from "./logger";
import { errorText } from "./logger";
import { type SavedTable, saveTables } from "./table-file";

export class CacheWriter {
  private dirty = false;
  private running: Promise<void> | null = null;
  /** ms of the last write's start; 0 before any. */
  lastSavedAt = 0;

  constructor(
    private readonly file: string | null,
    private readonly entries: () => [string, SavedTable][],
    private readonly now: () => number,
    private readonly logger: Logger,
  ) {}

  /** Asks for a write of the current tables (nothing without a file). */
  schedule(): void {
    if (this.file === null) return;
    this.dirty = true;
    this.running ??= this.run();
  }

  /** Resolves when no write is under way. */
  async idle(): Promise<void> {
    await this.running;
  }

  private async run(): Promise<void> {
    while (this.dirty && this.file !== null) {
      this.dirty = false;
      const entries = this.entries();
      this.lastSavedAt = this.now();
      try {
        await saveTables(this.file, entries, this.lastSavedAt);
      } catch (e) {
        this.logger.error("router-client: could not write the table cache file", { file: this.file, error: errorText(e) });
      }
    }
    this.running = null;
  }
}
