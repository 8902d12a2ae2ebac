import type { OptionName } from "./args";
import type { Context } from "./context";
import { ApiFailure } from "./errors";

export interface Command {
  /** The words that name it, e.g. "lines add". */
  name: string;
  /** Positional arguments as shown in the usage line, e.g. "NAME". */
  args?: string;
  min?: number;
  max?: number;
  summary: string;
  /** More help under the usage line. */
  details?: string;
  options?: OptionName[];
  run(ctx: Context, args: string[]): Promise<void>;
}

/** A positional the command's `min` requires: run() checks the count before it calls the command. */
export function requireArg(arg: string | undefined): string {
  if (arg === undefined) throw new Error("a required positional is missing: run() checks `min` before calling a command");
  return arg;
}

/**
 * Relay an API validation error in the command line's terms: `baseUrl: must be an http(s) URL`
 * gains `(--base-url)` when the body was built from that option.
 */
export async function withFlagHints<T>(call: Promise<T>, flags: Record<string, string>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error;
    const details = error.details.map((d) => {
      const parts = d.field?.split(".") ?? [];
      // The longest prefix of the field that an option fed: expect.minLength, then routes (of routes.0.weight).
      const flag = parts.map((_, i) => flags[parts.slice(0, parts.length - i).join(".")]).find((f) => f !== undefined);
      return flag ? { ...d, message: `${d.message} (${flag})` } : d;
    });
    throw new ApiFailure(error.message, error.status, error.code, details);
  }
}
