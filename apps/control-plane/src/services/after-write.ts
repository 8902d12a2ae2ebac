import { errorSummary } from "@linewatch/db";
import type { Logger } from "../logger";

/**
 * A change that is stored stays stored: telling the engine about it may fail (the database went away
 * between the write and the reload); that is logged and the next reconcile catches up, never a 500.
 */
export async function afterWrite(logger: Logger, what: string, apply: () => Promise<void>): Promise<void> {
  await apply().catch((error: unknown) =>
    logger.error("a stored line change could not be applied yet", { what, error: errorSummary(error) }),
  );
}
