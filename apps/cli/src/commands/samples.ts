import { numberOption, type Values } from "../args";
import { type Command, requireArg, withFlagHints } from "../command";
import type { Context } from "../context";
import { InvalidInput, UsageError } from "../errors";
import { table } from "../format";
import { readDataFile } from "../read-file";
import { findSample } from "../resolve";
import type { Sample, SampleCreate, SampleList } from "../types";

const SAMPLE_FLAGS: Record<string, string> = {
  name: "NAME",
  protocol: "--protocol",
  routes: "--route",
  request: "--prompt",
  timeoutMs: "--timeout-ms",
  weight: "--weight",
};
const EXPECT_FLAGS: Record<string, string> = {
  minLength: "--min-length",
  maxLength: "--max-length",
  contains: "--contains",
  matches: "--matches",
  answer: "--answer",
  requiredFields: "--required-field",
  maxLatencyMs: "--max-latency-ms",
};

/** A one-message request in the protocol's shape (Responses: `input`; the others: `messages`). */
function promptRequest(protocol: string, prompt: string, maxTokens: number): Record<string, unknown> {
  if (protocol === "openai-responses") return { input: prompt, max_output_tokens: maxTokens };
  return { messages: [{ role: "user", content: prompt }], max_tokens: maxTokens };
}

/** A sample from flags: a one-message prompt and the expectations given. */
function sampleFromFlags(name: string, v: Values): Record<string, unknown> {
  const protocol = v.protocol ?? "openai-chat";
  if (protocol !== "openai-chat" && protocol !== "openai-responses" && protocol !== "anthropic-messages")
    throw new UsageError(`samples add: a ${protocol} sample needs -f FILE (its request body is protocol-specific)`);
  if (v.prompt === undefined) throw new UsageError("samples add: --prompt is required (or -f FILE)");
  const expect: Record<string, unknown> = {};
  for (const [field, option, integer] of [
    ["minLength", "min-length", true],
    ["maxLength", "max-length", true],
    ["maxLatencyMs", "max-latency-ms", true],
  ] as const) {
    const n = numberOption(v, option, { integer });
    if (n !== undefined) expect[field] = n;
  }
  if (v.contains) expect.contains = v.contains;
  if (v["required-field"]) expect.requiredFields = v["required-field"];
  if (v.matches !== undefined) expect.matches = v.matches;
  if (v.answer !== undefined) expect.answer = v.answer;
  if (v.nonce) expect.nonce = true;
  if (v.varies) expect.varies = true;
  const body: Record<string, unknown> = {
    name,
    protocol,
    routes: v.route ?? [],
    request: promptRequest(protocol, v.prompt, numberOption(v, "max-tokens", { integer: true }) ?? 200),
    expect,
  };
  const timeoutMs = numberOption(v, "timeout-ms", { integer: true });
  if (timeoutMs !== undefined) body.timeoutMs = timeoutMs;
  const weight = numberOption(v, "weight");
  if (weight !== undefined) body.weight = weight;
  return body;
}

function sampleBody(ctx: Context, name: string | undefined): Record<string, unknown> {
  const v = ctx.values;
  if (v.file === undefined) {
    if (name === undefined) throw new UsageError("samples add: give NAME and --prompt, or -f FILE");
    return sampleFromFlags(name, v);
  }
  const raw = readDataFile(v.file, ctx.io.cwd);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new InvalidInput(`${v.file}: expected one sample (a mapping with name, protocol, request, expect)`);
  return name === undefined ? (raw as Record<string, unknown>) : { ...raw, name };
}

export const sampleCommands: Command[] = [
  {
    name: "samples add",
    args: "[NAME]",
    max: 1,
    summary: "add a golden sample, from -f FILE (YAML/JSON, as in probes/) or from flags",
    details: 'Example: linewatch samples add capital --prompt "Capital of France? One word." --answer paris --max-latency-ms 5000',
    options: [
      "file",
      "protocol",
      "route",
      "prompt",
      "max-tokens",
      "min-length",
      "max-length",
      "contains",
      "matches",
      "answer",
      "nonce",
      "varies",
      "required-field",
      "max-latency-ms",
      "timeout-ms",
      "weight",
    ],
    async run(ctx, [name]) {
      const body = sampleBody(ctx, name);
      const hints =
        ctx.values.file === undefined
          ? { ...SAMPLE_FLAGS, ...Object.fromEntries(Object.entries(EXPECT_FLAGS).map(([k, f]) => [`expect.${k}`, f])) }
          : {};
      const sample = await withFlagHints(ctx.api.post<Sample>("/v1/samples", body as SampleCreate), hints);
      ctx.output(sample, () => `created sample ${sample.name} (${sample.id})`);
    },
  },
  {
    name: "samples list",
    max: 0,
    summary: "list samples",
    async run(ctx) {
      const list = await ctx.api.get<SampleList>("/v1/samples");
      ctx.output(list, () =>
        table(
          ["NAME", "PROTOCOL", "ROUTES", "WEIGHT", "TIMEOUT", "SOURCE", "EXPECT"],
          list.samples.map((s) => [
            s.name,
            s.protocol,
            s.routes.length ? s.routes.join(",") : "(all)",
            s.weight,
            s.timeoutMs,
            s.source,
            Object.keys(s.expect).join(","),
          ]),
        ),
      );
    },
  },
  {
    name: "samples rm",
    args: "SAMPLE",
    min: 1,
    max: 1,
    summary: "delete a sample (by name or id; its probe results go with it)",
    async run(ctx, [ref]) {
      const sample = await findSample(ctx.api, requireArg(ref));
      await ctx.api.delete(`/v1/samples/${sample.id}`);
      ctx.output(
        { deleted: { kind: "sample", name: sample.name, id: sample.id } },
        () =>
          `deleted sample ${sample.name}${sample.source === "shipped" ? " (a shipped sample: the control plane loads it again at its next start)" : ""}`,
      );
    },
  },
];
