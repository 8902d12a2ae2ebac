// Where the router-client (and the router) write what happened: JSON lines on stderr, or nowhere.

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

export const jsonLineLogger: Logger = {
  info: (msg, fields) => process.stderr.write(`${JSON.stringify({ level: "info", msg, ...fields })}\n`),
  warn: (msg, fields) => process.stderr.write(`${JSON.stringify({ level: "warn", msg, ...fields })}\n`),
  error: (msg, fields) => process.stderr.write(`${JSON.stringify({ level: "error", msg, ...fields })}\n`),
};

export const errorText = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as { cause?: unknown }).cause;
  return cause instanceof Error ? `${e.message}: ${cause.message}` : e.message;
};
