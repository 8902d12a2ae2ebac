import type { Values } from "./args";
import { ApiClient, DEFAULT_URL } from "./client";

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Standard error is a terminal: progress may redraw one line. */
  stderrIsTTY?: boolean;
  env: Record<string, string | undefined>;
  cwd: string;
  /** stdout is a terminal (main.ts): human output may be coloured. */
  isTTY?: boolean;
}

/** What a command gets: its options, the API client and where to write. */
export class Context {
  private client_: ApiClient | null = null;

  constructor(
    readonly io: Io,
    readonly values: Values,
  ) {}

  get json(): boolean {
    return this.values.json === true;
  }

  /** ANSI colours in human output: on a terminal unless NO_COLOR is set; FORCE_COLOR turns them on anywhere. */
  get color(): boolean {
    const { NO_COLOR, FORCE_COLOR } = this.io.env;
    if (this.json || NO_COLOR) return false;
    if (FORCE_COLOR && FORCE_COLOR !== "0") return true;
    return this.io.isTTY === true;
  }

  get url(): string {
    return this.values.url ?? this.io.env.LINEWATCH_URL ?? DEFAULT_URL;
  }

  get api(): ApiClient {
    this.client_ ??= new ApiClient(this.url, this.values.token ?? (this.io.env.LINEWATCH_TOKEN || undefined));
    return this.client_;
  }

  print(text: string): void {
    this.io.stdout(text.endsWith("\n") ? text : `${text}\n`);
  }

  printJson(value: unknown): void {
    this.io.stdout(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** JSON for scripts, or the human form. */
  output(value: unknown, human: () => string): void {
    if (this.json) this.printJson(value);
    else this.print(human());
  }

  warn(text: string): void {
    this.io.stderr(`linewatch: ${text}\n`);
  }
}
