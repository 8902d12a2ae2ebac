import { z } from "@hono/zod-openapi";
import { PROTOCOLS } from "@linewatch/core";
import { NameSchema } from "./common";

const isRegex = (s: string) => {
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
};

/** What a good answer looks like (SPEC §4). */
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

const fields = {
  name: NameSchema.openapi({ example: "nonce-echo" }),
  protocol: z.enum(PROTOCOLS),
  routes: z.array(NameSchema).max(100).openapi({ description: "Empty: every route of the sample's protocol" }),
  request: RequestSchema,
  expect: ExpectSchema,
  timeoutMs: z.number().int().min(100).max(600_000),
  weight: z.number().min(0).max(100),
};

type RequestCheck = { protocol?: string | undefined; request?: Record<string, unknown> | undefined };

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
}

export const SampleCreateSchema = z
  .strictObject({
    name: fields.name,
    protocol: fields.protocol,
    routes: fields.routes.default([]),
    request: fields.request,
    expect: fields.expect,
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
    timeoutMs: fields.timeoutMs.nullable().optional(),
    weight: fields.weight.optional(),
  })
  .superRefine(checkRequest)
  .openapi("SamplePatch");

export const SampleSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    protocol: fields.protocol,
    routes: z.array(z.string()),
    request: z.record(z.string(), z.unknown()),
    expect: z.record(z.string(), z.unknown()),
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
