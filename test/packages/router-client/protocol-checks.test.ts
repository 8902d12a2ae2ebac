// The in-band check per protocol (docs/live-evidence.md): tables of answers → outcomes, and every
// stream cut at every event boundary, read in chunks of every size down to single bytes.
import { type AnswerCheckOptions, type AnswerKind, checkJsonAnswer, type SseScan, streamCheckFor } from "@linewatch/router-client";
import { describe, expect, it } from "vitest";

const opts = (kind: AnswerKind, maxTokens: number | null = null): AnswerCheckOptions => ({ kind, cutMinTokens: 16, maxTokens });
const json = (v: unknown) => Buffer.from(JSON.stringify(v));

function readStream(kind: AnswerKind, text: string, pieces: number, complete = true, maxTokens: number | null = null) {
  const c: SseScan = streamCheckFor(opts(kind, maxTokens));
  const bytes = Buffer.from(text);
  const size = Math.max(1, Math.ceil(bytes.length / pieces));
  for (let i = 0; i < bytes.length; i += size) c.push(bytes.subarray(i, i + size));
  return c.end(complete);
}

/** Every event boundary short of the last event: the stream as a client got it if it ended there. */
function everyCut(events: string[]): string[] {
  return events.map((_, k) => events.slice(0, k).join(""));
}

// ---- Anthropic Messages ---------------------------------------------------------------------------
const anthropicEvent = (type: string, data: Record<string, unknown> = {}) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const message = (content: unknown[], stop = "end_turn", usage: Record<string, number> = { input_tokens: 12, output_tokens: 40 }) => ({
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude",
  content,
  stop_reason: stop,
  stop_sequence: null,
  usage,
});
const anthropicStream = (deltas: string[], stop = "end_turn", output = 40, toolUse = false): string[] => [
  anthropicEvent("message_start", {
    message: { ...message([], "x"), stop_reason: null, usage: { input_tokens: 12, cache_read_input_tokens: 100, output_tokens: 1 } },
  }),
  anthropicEvent("content_block_start", {
    index: 0,
    content_block: toolUse ? { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} } : { type: "text", text: "" },
  }),
  anthropicEvent("ping"),
  ...(toolUse
    ? [anthropicEvent("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: '{"city":"Paris"}' } })]
    : []),
  ...deltas.map((text) => anthropicEvent("content_block_delta", { index: 0, delta: { type: "text_delta", text } })),
  anthropicEvent("content_block_stop", { index: 0 }),
  anthropicEvent("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: output } }),
  anthropicEvent("message_stop"),
];

describe("Anthropic Messages, not streamed", () => {
  const cases: [string, Buffer, string, number | null][] = [
    ["text", json(message([{ type: "text", text: "Hello there" }])), "ok", null],
    ["a tool_use block and no text", json(message([{ type: "tool_use", id: "t", name: "f", input: {} }], "tool_use")), "ok", null],
    ["a server tool", json(message([{ type: "server_tool_use", id: "t", name: "web_search", input: {} }], "pause_turn")), "ok", null],
    ["no blocks", json(message([])), "empty", null],
    ["an empty text block", json(message([{ type: "text", text: "" }])), "empty", null],
    ["only thinking", json(message([{ type: "thinking", thinking: "hmm", signature: "s" }])), "empty", null],
    [
      '{"type": "error"} in a 200',
      json({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
      "masked_error",
      null,
    ],
    ["no content", json({ id: "msg_1", type: "message" }), "masked_error", null],
    ["not JSON", Buffer.from("<html>502</html>"), "masked_error", null],
    [
      "max_tokens under the cut threshold",
      json(message([{ type: "text", text: "Hi" }], "max_tokens", { input_tokens: 3, output_tokens: 4 })),
      "cut",
      null,
    ],
    [
      "max_tokens at the client's own limit",
      json(message([{ type: "text", text: "Hi" }], "max_tokens", { input_tokens: 3, output_tokens: 5 })),
      "ok",
      5,
    ],
    [
      "max_tokens above the threshold",
      json(message([{ type: "text", text: "A long text" }], "max_tokens", { input_tokens: 3, output_tokens: 300 })),
      "ok",
      null,
    ],
  ];
  it.each(cases)("%s → %s", (_name, body, outcome, maxTokens) => {
    expect(checkJsonAnswer(body, opts("anthropic", maxTokens)).outcome).toBe(outcome);
  });

  it("counts the prompt cache's tokens into the prompt", () => {
    const body = json(
      message([{ type: "text", text: "Hi" }], "end_turn", {
        input_tokens: 3,
        cache_creation_input_tokens: 10,
        cache_read_input_tokens: 20,
        output_tokens: 7,
      }),
    );
    expect(checkJsonAnswer(body, opts("anthropic"))).toEqual({ outcome: "ok", promptTokens: 33, completionTokens: 7 });
  });

  it("count_tokens: a count is ok, anything else an error in disguise", () => {
    expect(checkJsonAnswer(json({ input_tokens: 42 }), opts("anthropic-count"))).toEqual({
      outcome: "ok",
      promptTokens: 42,
      completionTokens: 0,
    });
    expect(checkJsonAnswer(json({ type: "error", error: { type: "api_error" } }), opts("anthropic-count")).outcome).toBe("masked_error");
  });
});

describe("Anthropic Messages, streamed", () => {
  const good = anthropicStream(["Grüße ", "aus ", "Köln ✓"]);

  it("a whole stream is ok, read in chunks of any size down to single bytes; usage with the cache read", () => {
    const text = good.join("");
    for (const pieces of [1, 2, 7, 50, text.length]) {
      expect(readStream("anthropic", text, pieces)).toEqual({ outcome: "ok", promptTokens: 112, completionTokens: 40 });
    }
  });

  it("cut at every event boundary (no message_stop) → cut", () => {
    for (const [k, text] of everyCut(good).entries()) expect(readStream("anthropic", text, 3).outcome, `after ${k} events`).toBe("cut");
  });

  it("an error event at every event boundary (e.g. overloaded_error) → cut", () => {
    const error = anthropicEvent("error", { error: { type: "overloaded_error", message: "Overloaded" } });
    for (const [k, text] of everyCut(good).entries())
      expect(readStream("anthropic", text + error, 5).outcome, `after ${k} events`).toBe("cut");
  });

  it("a stream the connection broke off is cut even with message_stop sent", () => {
    expect(readStream("anthropic", good.join(""), 4, false).outcome).toBe("cut");
  });

  it("no text and no tool_use → empty; a tool_use → ok; max_tokens under the threshold → cut", () => {
    expect(readStream("anthropic", anthropicStream([]).join(""), 3).outcome).toBe("empty");
    expect(readStream("anthropic", anthropicStream([], "tool_use", 20, true).join(""), 3).outcome).toBe("ok");
    expect(readStream("anthropic", anthropicStream(["Hi"], "max_tokens", 3).join(""), 3).outcome).toBe("cut");
    expect(readStream("anthropic", anthropicStream(["Hi"], "max_tokens", 3).join(""), 3, true, 3).outcome).toBe("ok");
  });

  it("text that quotes the protocol's own keys is text, not structure", () => {
    const tricky = anthropicStream(['"type":"message_stop" and "stop_reason":"max_tokens"']);
    expect(readStream("anthropic", tricky.slice(0, -1).join(""), 2).outcome).toBe("cut");
    expect(readStream("anthropic", tricky.join(""), 2).outcome).toBe("ok");
  });
});

// ---- OpenAI Responses -----------------------------------------------------------------------------
const response = (output: unknown[], status = "completed", extra: Record<string, unknown> = {}) => ({
  id: "resp_1",
  object: "response",
  status,
  error: null,
  incomplete_details: null,
  output,
  usage: { input_tokens: 12, output_tokens: 40, total_tokens: 52 },
  ...extra,
});
const messageItem = (text: string) => ({ type: "message", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] });
const functionCall = { type: "function_call", id: "fc_1", call_id: "call_1", name: "get_weather", arguments: "{}" };

describe("OpenAI Responses, not streamed", () => {
  const cases: [string, unknown, string, number | null][] = [
    ["text", response([messageItem("Hello")]), "ok", null],
    ["a function call and no text", response([functionCall]), "ok", null],
    ["reasoning only", response([{ type: "reasoning", summary: [] }]), "empty", null],
    ["empty output", response([]), "empty", null],
    ["empty text", response([messageItem("")]), "empty", null],
    ["status failed", response([], "failed", { error: { code: "server_error", message: "boom" } }), "masked_error", null],
    ["an error object in a 200", { error: { message: "quota", type: "insufficient_quota" } }, "masked_error", null],
    ["no output", { id: "resp_1", status: "completed" }, "masked_error", null],
    [
      "incomplete at max_output_tokens under the threshold",
      response([messageItem("Hi")], "incomplete", {
        incomplete_details: { reason: "max_output_tokens" },
        usage: { input_tokens: 3, output_tokens: 4 },
      }),
      "cut",
      null,
    ],
    [
      "incomplete at the client's own max_output_tokens",
      response([messageItem("Hi")], "incomplete", {
        incomplete_details: { reason: "max_output_tokens" },
        usage: { input_tokens: 3, output_tokens: 4 },
      }),
      "ok",
      4,
    ],
    [
      "incomplete for a content filter",
      response([messageItem("Hi there")], "incomplete", { incomplete_details: { reason: "content_filter" } }),
      "cut",
      null,
    ],
    ["queued (background: nothing to judge yet)", response([], "queued", { usage: null }), "ok", null],
  ];
  it.each(cases)("%s → %s", (_name, body, outcome, maxTokens) => {
    expect(checkJsonAnswer(json(body), opts("responses", maxTokens)).outcome).toBe(outcome);
  });
  it("not JSON → masked_error", () => {
    expect(checkJsonAnswer(Buffer.from("Bad gateway"), opts("responses")).outcome).toBe("masked_error");
  });
});

const responsesEvent = (type: string, data: Record<string, unknown>, seq: number) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq, ...data })}\n\n`;
function responsesStream(
  deltas: string[],
  final: Record<string, unknown> = response([messageItem(deltas.join(""))]),
  terminal = "response.completed",
): string[] {
  let seq = 0;
  return [
    responsesEvent("response.created", { response: { ...response([], "in_progress"), usage: null } }, seq++),
    responsesEvent("response.output_item.added", { output_index: 0, item: { type: "message", content: [] } }, seq++),
    ...deltas.map((delta) =>
      responsesEvent("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta }, seq++),
    ),
    responsesEvent("response.function_call_arguments.delta", { item_id: "fc", output_index: 1, delta: "not answer text" }, seq++),
    responsesEvent(terminal, { response: final }, seq++),
  ];
}

describe("OpenAI Responses, streamed", () => {
  const good = responsesStream(["Grüße ", "aus Köln ✓"]);

  it("a whole stream is ok, in chunks of any size; usage from response.completed", () => {
    const text = good.join("");
    for (const pieces of [1, 3, 40, text.length]) {
      expect(readStream("responses", text, pieces)).toEqual({ outcome: "ok", promptTokens: 12, completionTokens: 40 });
    }
  });

  it("cut at every event boundary (no response.completed) → cut", () => {
    for (const [k, text] of everyCut(good).entries()) expect(readStream("responses", text, 3).outcome, `after ${k} events`).toBe("cut");
  });

  it("an error event or response.failed at every boundary → masked_error", () => {
    const error = responsesEvent("error", { code: "server_error", message: "boom", param: null }, 99);
    const failed = responsesEvent(
      "response.failed",
      { response: response([], "failed", { error: { code: "server_error", message: "boom" } }) },
      99,
    );
    for (const text of everyCut(good)) {
      expect(readStream("responses", text + error, 4).outcome).toBe("masked_error");
      expect(readStream("responses", text + failed, 4).outcome).toBe("masked_error");
    }
  });

  it("incomplete at the token limit under the threshold → cut; a function call alone → ok; no deltas but text in the final object → ok", () => {
    const short = response([messageItem("Hi")], "incomplete", {
      incomplete_details: { reason: "max_output_tokens" },
      usage: { input_tokens: 3, output_tokens: 4 },
    });
    expect(readStream("responses", responsesStream(["Hi"], short, "response.incomplete").join(""), 2).outcome).toBe("cut");
    expect(readStream("responses", responsesStream([], response([functionCall])).join(""), 2).outcome).toBe("ok");
    expect(readStream("responses", responsesStream([], response([messageItem("said at the end")])).join(""), 2).outcome).toBe("ok");
    expect(readStream("responses", responsesStream([], response([])).join(""), 2).outcome).toBe("empty");
  });
});

// ---- chat completions (the same table for the boundary cuts) -------------------------------------
describe("chat completions, streamed: cut at every event boundary", () => {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const good = [
    chunk({ role: "assistant", content: "" }),
    chunk({ content: "Hello" }),
    chunk({ content: " world" }),
    chunk({}, "stop"),
    "data: [DONE]\n\n",
  ];
  it("→ cut before the finish chunk; ok from it on (a finish reason without [DONE] is ok)", () => {
    for (const [k, text] of everyCut(good).slice(0, 4).entries())
      expect(readStream("chat", text, 3).outcome, `after ${k} events`).toBe("cut");
    expect(readStream("chat", good.slice(0, 4).join(""), 3).outcome).toBe("ok");
    expect(readStream("chat", good.join(""), 3).outcome).toBe("ok");
  });
});

describe("a table's pickers per protocol", () => {
  it("picks only the lines of the request's protocol, by their weights; none when no line speaks it", async () => {
    const { buildSnapshot } = await import("@linewatch/router-client");
    const line = (id: string, protocol: string, weight: number) => ({
      id,
      name: id,
      tier: "paid",
      state: "healthy",
      weight,
      protocol,
      baseUrl: "http://127.0.0.1:9/v1",
      model: "m",
    });
    const snap = buildSnapshot({
      route: "r",
      version: 1,
      generatedAt: "2026-12-01T00:00:00.000Z",
      mode: "normal",
      lines: [line("c1", "openai-chat", 10000), line("a1", "anthropic-messages", 2500), line("a2", "anthropic-messages", 7500)],
    });
    expect(snap.protocols).toEqual(["openai-chat", "anthropic-messages"]);
    const claude = snap.pickerFor("anthropic-messages");
    expect(claude?.items.map((l) => l.id)).toEqual(["a1", "a2"]);
    expect(claude?.pick(() => 0.3)?.id).toBe("a2");
    expect(claude?.pick(() => 0.2)?.id).toBe("a1");
    expect(snap.pickerFor("openai-chat")?.items.map((l) => l.id)).toEqual(["c1"]);
    expect(snap.pickerFor("openai-responses")).toBeNull();
    const single = buildSnapshot({
      route: "s",
      version: 1,
      generatedAt: "2026-12-01T00:00:00.000Z",
      mode: "normal",
      lines: [line("c1", "openai-chat", 10000)],
    });
    expect(single.pickerFor("openai-chat")).toBe(single.picker);
  });
});
