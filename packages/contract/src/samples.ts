import { z } from "@hono/zod-openapi";
import { checkFingerprintSample, checkVariants, FINGERPRINT_FORMS, MAX_VARIANT_CHARS, MAX_VARIANTS, PROTOCOLS } from "@linewatch/core";
import { NameSchema } from "./common";

const isRegex = (s: string) => {
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
};

/** What a good answer looks like (docs/scoring.md). */
export const ExpectSchema = z
  .strictObject({
    minLength: z.number().int().min(0).max(1_000_000).optional(),
    maxLength: z.number().int().min(1).max(1_000_000).optional(),
    requiredFields: z
      .array(z.string().min(1).max(200))
      .max(50)
      .optional()
      .openapi({ description: "Paths; `content.` = inside the answer parsed as JSON, else inside the response body" }),
    contains: z.array(z.string().min(1).max(1000)).max(50).optional(),
    matches: z.string().min(1).max(1000).refine(isRegex, "not a valid regular expression").optional(),
    answer: z.string().min(1).max(1000).optional().openapi({ description: "Expected normalized answer (correctness)" }),
    nonce: z.boolean().optional().openapi({ description: "The answer must echo the request's {{nonce}}" }),
    varies: z.boolean().optional().openapi({ description: "The same content 3 probes in a row means a stale cache" }),
    maxLatencyMs: z.number().int().min(1).max(600_000).optional(),
    fingerprint: z
      .strictObject({
        form: z.enum(FINGERPRINT_FORMS),
        options: z.array(z.string().min(1).max(60)).min(2).max(26).optional(),
      })
      .optional()
      .openapi({
        description:
          "A fingerprint sample: its short answers (temperature 0, at most 32 tokens) are anchored per line and compared with the line's own and its paid peers' (docs/scoring.md#what-a-relay-can-fake). `form`: number | choice | word | letters; `options`: the choices a `choice` prompt lists",
      }),
  })
  .refine((e) => e.minLength === undefined || e.maxLength === undefined || e.minLength <= e.maxLength, {
    message: "minLength must not exceed maxLength",
    path: ["minLength"],
  })
  .openapi("SampleExpect");

const RequestSchema = z.record(z.string(), z.unknown()).openapi({
  description: "Protocol body without `model`; strings may hold {{nonce}} and {{now}}",
  example: { messages: [{ role: "user", content: "Echo {{nonce}}" }], max_tokens: 50 },
});

const VariantsSchema = z.array(z.string().trim().min(1).max(MAX_VARIANT_CHARS)).max(MAX_VARIANTS).openapi({
  description:
    "Other phrasings of the request's prompt (its last user message), rotated at random from probe to probe so a relay cannot pick the probes out by their wording; answers are anchored per phrasing",
});

const fields = {
  name: NameSchema.openapi({ example: "nonce-echo" }),
  protocol: z.enum(PROTOCOLS),
  routes: z.array(NameSchema).max(100).openapi({ description: "Empty: every route of the sample's protocol" }),
  request: RequestSchema,
  expect: ExpectSchema,
  timeoutMs: z.number().int().min(100).max(600_000),
  weight: z.number().min(0).max(100),
};

type RequestCheck = {
  protocol?: string | undefined;
  request?: Record<string, unknown> | undefined;
  expect?: { fingerprint?: unknown; varies?: unknown; nonce?: unknown } | undefined;
  variants?: string[] | undefined;
};

/** "request.temperature: must be 0 (…)" → the field's path and the message. */
function problemIssue(problem: string): { path: string[]; message: string } {
  const at = problem.indexOf(": ");
  return at < 0 ? { path: [], message: problem } : { path: problem.slice(0, at).split("."), message: problem.slice(at + 2) };
}

/**
 * A whole sample's fingerprint and phrasing rules (core's checkFingerprintSample and checkVariants),
 * each problem reported against its field. The API refuses such a sample; the service checks a patch
 * against the sample it makes.
 */
export function sampleProblems(s: Required<Pick<RequestCheck, "request">> & RequestCheck): { path: string[]; message: string }[] {
  const request = s.request;
  const problems =
    s.expect?.fingerprint !== undefined
      ? checkFingerprintSample({ request, expect: s.expect, variants: s.variants })
      : checkVariants(request, s.variants);
  return problems.map(problemIssue);
}

/** Protocol-specific checks on the request body, reported against the field that is wrong. */
function checkRequest(body: RequestCheck, ctx: z.RefinementCtx) {
  const { request, protocol } = body;
  if (!request) return;
  if ("model" in request) ctx.addIssue({ code: "custom", path: ["request", "model"], message: "leave model out: each line sets its own" });
  if (
    (protocol === "openai-chat" || protocol === "anthropic-messages") &&
    (!Array.isArray(request.messages) || request.messages.length === 0)
  ) {
    ctx.addIssue({ code: "custom", path: ["request", "messages"], message: "must be a non-empty array of messages" });
  }
  if (
    protocol === "openai-responses" &&
    !(typeof request.input === "string" || (Array.isArray(request.input) && request.input.length > 0))
  ) {
    ctx.addIssue({ code: "custom", path: ["request", "input"], message: "must be a string or a non-empty array of input items" });
  }
  // A patch may change only a part: the service checks the sample it makes.
  if (body.expect !== undefined || body.variants !== undefined)
    for (const issue of sampleProblems({ ...body, request })) ctx.addIssue({ code: "custom", ...issue });
}

export const SampleCreateSchema = z
  .strictObject({
    name: fields.name,
    protocol: fields.protocol,
    routes: fields.routes.default([]),
    request: fields.request,
    expect: fields.expect,
    variants: VariantsSchema.default([]),
    timeoutMs: fields.timeoutMs.optional(),
    weight: fields.weight.default(1),
  })
  .superRefine(checkRequest)
  .openapi("SampleCreate");

export const SamplePatchSchema = z
  .strictObject({
    name: fields.name.optional(),
    protocol: fields.protocol.optional(),
    routes: fields.routes.optional(),
    request: fields.request.optional(),
    expect: fields.expect.optional(),
    variants: VariantsSchema.optional(),
    timeoutMs: fields.timeoutMs.nullable().optional(),
    weight: fields.weight.optional(),
  })
  .superRefine((body, ctx) => {
    // A patch is checked whole by the service; here only what it carries of the request.
    const { expect: _e, variants: _v, ...rest } = body;
    checkRequest(rest, ctx);
  })
  .openapi("SamplePatch");

export const SampleSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    protocol: fields.protocol,
    routes: z.array(z.string()),
    request: z.record(z.string(), z.unknown()),
    expect: z.record(z.string(), z.unknown()),
    variants: z.array(z.string()).openapi({ description: "Other phrasings of the prompt, rotated from probe to probe" }),
    timeoutMs: z.number().int().nullable(),
    weight: z.number(),
    source: z.enum(["api", "shipped"]).openapi({ description: "shipped: from probes/*.yaml, refreshed at start-up until edited" }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Sample");

export const SampleDetailSchema = SampleSchema.extend({
  broken: z.array(z.object({ check: z.string(), detail: z.string(), lines: z.number().int(), lastSeenAt: z.string() })).openapi({
    description:
      "Checks of this sample its latest probe results could not evaluate (a bad regex, an expected answer against a JSON answer): the sample is broken there; never counted against a line",
  }),
}).openapi("SampleDetail");

export const SampleListSchema = z.object({ samples: z.array(SampleSchema) }).openapi("SampleList");

export type SampleCreate = z.infer<typeof SampleCreateSchema>;
export type SamplePatch = z.infer<typeof SamplePatchSchema>;
export type SampleResponse = z.infer<typeof SampleSchema>;
export type SampleDetail = z.infer<typeof SampleDetailSchema>;
export type SampleList = z.infer<typeof SampleListSchema>;
