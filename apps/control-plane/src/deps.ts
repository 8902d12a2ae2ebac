import type { Database } from "@linewatch/db";
import type { BaseLookup } from "@linewatch/router-client";
import type { Config } from "./config";
import type { Logger } from "./logger";
import type { SecretBox } from "./secrets";

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Everything the app needs comes in here: no module-level singletons. */
export interface AppDeps {
  config: Config;
  database: Database;
  clock: Clock;
  logger: Logger;
  secrets: SecretBox;
  /** The resolver under the upstream guard; unset: the system's (tests pass one they control). */
  dnsLookup?: BaseLookup;
}
