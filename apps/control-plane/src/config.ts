import { availableParallelism } from "node:os";
import { allowEntryProblem } from "@linewatch/router-client";
import { z } from "zod";
import { secretKeyProblem } from "./secrets";

const Bool = z.enum(["1", "0", "true", "false", "yes", "no", "on", "off", ""]).transform((v) => ["1", "true", "yes", "on"].includes(v));

const SecretKey = z
  .string()
  .min(1)
  .superRefine((v, ctx) => {
    const problem = secretKeyProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

const AllowList = z
  .string()
  .default("")
  .transform((v) =>
    v
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  )
  .superRefine((entries, ctx) => {
    for (const entry of entries) {
      const problem = allowEntryProblem(entry);
      if (problem) ctx.addIssue({ code: "custom", message: `${JSON.stringify(entry)}: ${problem}` });
    }
  });

const ConfigSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().min(1).default("127.0.0.1"),
  DATABASE_URL: z.string().url().optional(),
  LINEWATCH_DATA_DIR: z.string().min(1).default("./.linewatch/data"),
  /** 32 bytes as 64 hex chars or base64; unset → generated once into the data directory. */
  LINEWATCH_SECRET_KEY: SecretKey.optional(),
  /** Previous secret key, accepted for decryption during a rotation (npm run rotate-secret). */
  LINEWATCH_SECRET_KEY_PREVIOUS: SecretKey.optional(),
  LINEWATCH_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(1000).default(8),
  /** Under load, how long a batch of writes (results and reschedules, health) waits for more; 0 = never. */
  LINEWATCH_BATCH_LINGER_MS: z.coerce.number().int().min(0).max(10_000).default(100),
  LINEWATCH_PROBES_DIR: z.string().min(1).optional(),
  LINEWATCH_SHIPPED_SAMPLES: Bool.default(true),
  /** The shipped starter bank of fingerprint samples (probes/<protocol>/fingerprint/); false: left out, and removed unless edited. */
  LINEWATCH_SHIPPED_FINGERPRINTS: Bool.default(true),
  LINEWATCH_SCHEDULER: Bool.default(true),
  LINEWATCH_RETENTION_DAYS: z.coerce.number().min(0.001).max(3650).default(7),
  /** Worker threads a large policy replay runs in; unset: the machine's cores, at most 4; 1: none. */
  LINEWATCH_REPLAY_WORKERS: z.coerce.number().int().min(1).max(64).optional(),
  /** Host names, addresses or CIDRs an upstream may use even though they are cloud metadata / link-local. */
  LINEWATCH_ALLOW_UPSTREAM_HOSTS: AllowList,
  /** /metrics without a token (Prometheus scrapes plainly); false: an admin or viewer token is required. */
  LINEWATCH_METRICS_PUBLIC: Bool.default(true),
  /** Bootstrap admin token (e.g. from a secret store); stored hashed on start. */
  LINEWATCH_ADMIN_TOKEN: z.string().min(16).optional(),
  LINEWATCH_REPLICA_ID: z.string().min(1).optional(),
  /** How long a webhook delivery is retried before it is a dead letter (docs/alerts.md#delivery). */
  LINEWATCH_WEBHOOK_RETRY_WINDOW_SEC: z.coerce
    .number()
    .min(1)
    .max(7 * 86_400)
    .default(3600),
  /** One delivery attempt's bound: a hung receiver holds a slot this long at most. */
  LINEWATCH_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** Webhook deliveries this replica sends at once (at most 2 of them to one sink). */
  LINEWATCH_WEBHOOK_SLOTS: z.coerce.number().int().min(1).max(256).default(8),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
});

export type Config = Readonly<{
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  secretKey: string | undefined;
  secretKeyPrevious: string | undefined;
  maxInFlight: number;
  batchLingerMs: number;
  probesDir: string | undefined;
  shippedSamples: boolean;
  shippedFingerprints: boolean;
  scheduler: boolean;
  retentionDays: number;
  replayWorkers: number;
  allowUpstreamHosts: string[];
  metricsPublic: boolean;
  adminToken: string | undefined;
  replicaId: string | undefined;
  webhookRetryWindowMs: number;
  webhookTimeoutMs: number;
  webhookSlots: number;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
}>;

/** The one place that reads process.env. Throws a readable error naming the bad variable. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.LINEWATCH_DATA_DIR,
    secretKey: e.LINEWATCH_SECRET_KEY,
    secretKeyPrevious: e.LINEWATCH_SECRET_KEY_PREVIOUS,
    maxInFlight: e.LINEWATCH_MAX_IN_FLIGHT,
    batchLingerMs: e.LINEWATCH_BATCH_LINGER_MS,
    probesDir: e.LINEWATCH_PROBES_DIR,
    shippedSamples: e.LINEWATCH_SHIPPED_SAMPLES,
    shippedFingerprints: e.LINEWATCH_SHIPPED_FINGERPRINTS,
    scheduler: e.LINEWATCH_SCHEDULER,
    retentionDays: e.LINEWATCH_RETENTION_DAYS,
    replayWorkers: e.LINEWATCH_REPLAY_WORKERS ?? Math.min(4, availableParallelism()),
    allowUpstreamHosts: Object.freeze([...e.LINEWATCH_ALLOW_UPSTREAM_HOSTS]) as string[],
    metricsPublic: e.LINEWATCH_METRICS_PUBLIC,
    adminToken: e.LINEWATCH_ADMIN_TOKEN,
    replicaId: e.LINEWATCH_REPLICA_ID,
    webhookRetryWindowMs: e.LINEWATCH_WEBHOOK_RETRY_WINDOW_SEC * 1000,
    webhookTimeoutMs: e.LINEWATCH_WEBHOOK_TIMEOUT_MS,
    webhookSlots: e.LINEWATCH_WEBHOOK_SLOTS,
    logLevel: e.LOG_LEVEL,
  });
}
