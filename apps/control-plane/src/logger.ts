export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

/** One JSON object per line on stderr: easy to grep, easy to ship. Never pass secrets in fields. */
export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const at = (lvl: Exclude<LogLevel, "silent">) => (msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    write(`${JSON.stringify({ t: new Date().toISOString(), level: lvl, msg, ...fields })}\n`);
  };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

export const silentLogger: Logger = createLogger("silent");

/** Runs a log call at most once per interval (by the given clock); the calls in between are counted and reported with the next. */
export class RateLimitedLog {
  private last = Number.NEGATIVE_INFINITY;
  private skipped = 0;
  constructor(
    private readonly clock: { now(): number },
    private readonly intervalMs: number,
  ) {}

  /** `log` gets how many calls were skipped since the last one that ran. */
  note(log: (skipped: number) => void): void {
    const now = this.clock.now();
    if (now - this.last < this.intervalMs) {
      this.skipped++;
      return;
    }
    const skipped = this.skipped;
    this.last = now;
    this.skipped = 0;
    log(skipped);
  }
}
