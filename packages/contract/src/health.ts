import { z } from "@hono/zod-openapi";
import { CHECK_NAMES, CHECK_VERDICTS, HEALTH_STATES, STATUS_TONES } from "@linewatch/core";

const Components = z
  .object({ length: z.number(), fields: z.number(), freshness: z.number(), status: z.number(), latency: z.number() })
  .openapi("ScoreComponents", {
    description: "Each 0–1 (docs/scoring.md): content 65 (length 25, fields 20, freshness 20), status 20, latency 15",
  });

const Check = z
  .object({
    name: z.enum(CHECK_NAMES),
    verdict: z
      .enum(CHECK_VERDICTS)
      .openapi({ description: "`broken`: the sample asks what cannot be checked; never counted against the line" }),
    detail: z.string().optional(),
  })
  .openapi("ProbeCheck", { description: "One expectation of the sample and its verdict (docs/scoring.md)" });

export const ProbeResultSchema = z
  .object({
    id: z.string(),
    sampleId: z.string(),
    sample: z.string().openapi({ description: "The sample's name" }),
    trigger: z.string().openapi({ description: "schedule | confirm | manual" }),
    startedAt: z.string(),
    latencyMs: z.number().int(),
    status: z.number().int().nullable(),
    errorClass: z.string().nullable().openapi({ description: "timeout | connect | http_status | parse | protocol; null when answered" }),
    hardFailure: z.boolean(),
    passed: z.boolean(),
    score: z.number(),
    components: Components,
    checks: z.array(Check).openapi({ description: "Each expectation's verdict; a failed one fails the probe. Empty for a hard failure" }),
    reasons: z.array(z.string()).openapi({ description: "Why components are below 1, in words" }),
    contentLength: z.number().int(),
    contentHash: z.string().nullable(),
    excerpt: z.string(),
    tokens: z.number().int().nullable().openapi({ description: "Tokens the probe spent (usage.total_tokens)" }),
  })
  .openapi("ProbeResult");

export const ProbeRunSchema = z.object({ results: z.array(ProbeResultSchema) }).openapi("ProbeRun");

const LiveStatsSchema = z.object({
  from: z.string(),
  to: z.string(),
  requests: z.number().int(),
  counts: z.record(z.string(), z.number().int()).openapi({ description: "Live answers by outcome (docs/live-evidence.md)" }),
  failureRate: z.number().openapi({ description: "Share that failed for the line's sake (4xx excluded)" }),
  silentRate: z.number().openapi({ description: "Share that were 2xx failures: empty, masked_error, cut" }),
  successRate: z.number().nullable().openapi({ description: "Effective success rate: share that were ok" }),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  heldBack: z.number().int().openapi({
    description: "Requests routers sent to other lines because they had ejected this one (docs/router.md#ejection); not in `requests`",
  }),
  routers: z.array(z.string()),
});

export const LiveSectionSchema = z
  .object({
    recent: LiveStatsSchema.openapi({ description: "The recent window the verdict looks at" }),
    baseline: LiveStatsSchema.openapi({ description: "The line's own passive rate over the hour before" }),
    suspect: z.boolean().openapi({ description: "Live traffic suggests a fault (the control plane probes the line at once)" }),
    reason: z.string(),
  })
  .openapi("LineLive");

const AnchorAnswers = z.array(z.object({ answer: z.string(), share: z.number() }));
const LatestAnswers = z.array(z.object({ answer: z.string(), count: z.number().int() }));

/** What a relay can fake, per line (docs/scoring.md#what-a-relay-can-fake). */
export const RelaySectionSchema = z
  .object({
    fingerprints: z
      .array(
        z.object({
          sampleId: z.string(),
          sample: z.string(),
          own: z.number().openapi({ description: "The sequential statistic against the line's own anchors" }),
          peers: z
            .number()
            .openapi({ description: "The sequential statistic against its paid peers' (route mates naming the same model)" }),
          threshold: z.number(),
          failing: z
            .array(z.enum(["own", "peers"]))
            .openapi({ description: "The references whose statistic is at its threshold: the sample's fingerprint check fails" }),
          variants: z.array(
            z.object({
              variant: z.string().openapi({ description: "The phrasing's key (a hash of its text)" }),
              anchor: AnchorAnswers.openapi({ description: "The anchored answers, share of each" }),
              answers: z.number().int().openapi({ description: "Answers the anchor has learned" }),
              latest: LatestAnswers.openapi({ description: "The latest answers, count of each" }),
            }),
          ),
        }),
      )
      .openapi({ description: "Per fingerprint sample: its verdict, statistics and per phrasing the anchored answers against the latest" }),
    usage: z
      .array(
        z.object({
          sampleId: z.string(),
          sample: z.string(),
          failing: z.string().nullable().openapi({ description: "Why the latest judged usage check failed; null: it passed" }),
          promptTokens: z.record(z.string(), z.number().nullable()).openapi({ description: "Per phrasing: the anchored prompt tokens" }),
          tokensPerChar: z.number().nullable().openapi({ description: "Anchored completion tokens per character of answer" }),
        }),
      )
      .openapi({ description: "Per sample: the usage check's verdict and the anchors it holds claims to" }),
    shape: z
      .object({
        usual: z.string().nullable().openapi({ description: "The answers' usual protocol shape: the id's format and the body's fields" }),
        answers: z.number().int(),
        changedAt: z.string().nullable(),
        changedTo: z.string().nullable(),
        recentlyChanged: z
          .boolean()
          .openapi({ description: "A change within the hour: probed faster, and the fingerprint threshold is lower" }),
      })
      .nullable(),
    billing: z
      .object({
        since: z.string(),
        probes: z.number().int().openapi({ description: "Probes that reported usage in the window" }),
        claimedInput: z.number(),
        expectedInput: z.number(),
        claimedOutput: z.number(),
        expectedOutput: z.number(),
        inflation: z
          .number()
          .nullable()
          .openapi({ description: "Tokens claimed over tokens expected, both directions together; null while nothing is expected yet" }),
        usageFailures: z.number().int().openapi({ description: "Probes in the window that failed the usage check" }),
      })
      .openapi({
        description:
          "Billing evidence over the last 24 h: tokens the line's answers claimed against the tokens the same prompts cost on its own anchor and its paid peers, summed over the probes that had a reference",
      }),
  })
  .openapi("LineRelay");

export const LineHealthSchema = z
  .object({
    lineId: z.string(),
    name: z.string(),
    adminState: z.string(),
    state: z.enum(HEALTH_STATES),
    serviceState: z.string().openapi({ description: "The state the probes keep under an admin drain/disable" }),
    tone: z.enum(STATUS_TONES).openapi({ description: "How to show the line: by its state; a line at weight 0 is never shown as ok" }),
    since: z.string(),
    score: z.number().nullable().openapi({ description: "Mean of the last 10 minutes of probe scores" }),
    components: Components.nullable().openapi({ description: "Components averaged over the same window" }),
    weightFactor: z.number().openapi({ description: "0–1, applied to the line's base weight in every route" }),
    cooldown: z.object({ until: z.string(), durationMs: z.number() }).nullable(),
    probation: z.object({ stage: z.number().int(), factor: z.number() }).nullable(),
    holdUntil: z.string().nullable().openapi({ description: "Anti-flap: the weight is not raised before this" }),
    fastProbeUntil: z.string().nullable().openapi({ description: "After a trend alert the interval is halved until this" }),
    consecutiveFailures: z.number().int(),
    consecutivePasses: z.number().int(),
    evidence: z
      .object({
        hard: z.number(),
        hardThreshold: z.number(),
        content: z.number(),
        worstSample: z.object({ sampleId: z.string(), value: z.number() }).nullable(),
        contentThreshold: z.number(),
        hardRate: z.number(),
        contentRate: z.record(z.string(), z.number()),
        recentContent: z.record(z.string(), z.number()),
      })
      .openapi({
        description:
          "Evidence of failure against the line's usual rates (docs/health.md): cooldown when `hard` or `content` (or a sample's) reaches its threshold; per sample id the usual and recent content-failure rates",
      }),
    lengths: z.record(z.string(), z.object({ anchored: z.number().nullable(), recent: z.number().nullable() })).openapi({
      description: "Per sample id: the anchored usual answer length (learned while healthy) and the recent one, in characters",
    }),
    routes: z.array(
      z.object({ route: z.string(), baseWeight: z.number(), weight: z.number().int(), tableVersion: z.number().int().nullable() }),
    ),
    probing: z.object({
      samples: z.array(z.string()),
      intervalSec: z.number(),
      probesPerDay: z.number(),
      last24h: z.object({ probes: z.number().int(), tokens: z.number().int() }),
      tokensPerDay: z.number().openapi({ description: "Estimated from the last 24 h at the current interval" }),
    }),
    recent: z.array(ProbeResultSchema),
    live: LiveSectionSchema,
    relay: RelaySectionSchema,
  })
  .openapi("LineHealth");

export type ProbeResultResponse = z.infer<typeof ProbeResultSchema>;
export type ProbeRun = z.infer<typeof ProbeRunSchema>;
export type LineHealth = z.infer<typeof LineHealthSchema>;
export type LineRelay = z.infer<typeof RelaySectionSchema>;
