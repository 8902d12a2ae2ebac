import {
  ANTHROPIC_SDK,
  adapters,
  anthropicMessagesAdapter,
  genericHttpAdapter,
  getAdapter,
  OPENAI_SDK_VERSION,
  openAiChatAdapter,
  openAiResponsesAdapter,
  PROTOCOLS,
  type ProbeTarget,
  parseSse,
} from "@linewatch/core";
import { describe, expect, it } from "vitest";

const target: ProbeTarget = {
  baseUrl: "https://free.example.com/v1/",
  model: "gpt-4o-mini",
  headers: { "X-Team": "infra" },
  apiKey: "sk-test",
};
const request = { messages: [{ role: "user", content: "Say hi lw-1" }], max_tokens: 20 };

const OPENAI_BODY = JSON.stringify({
  id: "chatcmpl-AbC123",
  object: "chat.completion",
  created: 1764450000,
  model: "gpt-4o-mini-2024-07-18",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "155", refusal: null },
      logprobs: null,
      finish_reason: "stop",
    },
  ],
  usage: { prompt_tokens: 48, completion_tokens: 2, total_tokens: 50 },
  system_fingerprint: "fp_0ba0d124f1",
});

const OPENAI_SSE = [
  'data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1764450000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}',
  "",
  'data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1764450000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"lw-4f9c"},"finish_reason":null}]}',
  "",
  'data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1764450000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" is echoed."},"finish_reason":null}]}',
  "",
  ": keep-alive",
  "",
  'data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1764450000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
  "",
  'data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1764450000,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":6,"total_tokens":36}}',
  "",
  "data: [DONE]",
  "",
  "",
].join("\n");

const ANTHROPIC_BODY = JSON.stringify({
  id: "msg_01XFDUDYJgAACzvnptvVoYEL",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  content: [
    { type: "text", text: "The journey takes " },
    { type: "text", text: "155 minutes." },
  ],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 41, output_tokens: 9 },
});

const ANTHROPIC_SSE = [
  "event: message_start",
  'data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":25,"output_tokens":1}}}',
  "",
  "event: content_block_start",
  'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
  "",
  "event: ping",
  'data: {"type": "ping"}',
  "",
  "event: content_block_delta",
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}',
  "",
  "event: content_block_delta",
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" world"}}',
  "",
  "event: content_block_stop",
  'data: {"type":"content_block_stop","index":0}',
  "",
  "event: message_delta",
  'data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}',
  "",
  "event: message_stop",
  'data: {"type":"message_stop"}',
  "",
].join("\n");

describe("openai-chat", () => {
  it("builds POST {baseUrl}/chat/completions with the model and a bearer key", () => {
    const probe = openAiChatAdapter.buildProbe(target, request);
    expect(probe.url).toBe("https://free.example.com/v1/chat/completions");
    expect(probe.method).toBe("POST");
    expect(probe.headers).toMatchObject({
      authorization: "Bearer sk-test",
      "content-type": "application/json",
      "x-team": "infra",
    });
    expect(JSON.parse(probe.body)).toEqual({ ...request, model: "gpt-4o-mini" });
  });

  it("sets stream only when asked, and sends no key when the line has none", () => {
    const probe = openAiChatAdapter.buildProbe({ ...target, apiKey: null }, request, { stream: true });
    expect(JSON.parse(probe.body)).toMatchObject({ stream: true });
    expect(probe.headers.authorization).toBeUndefined();
    expect(JSON.parse(openAiChatAdapter.buildProbe(target, request).body)).not.toHaveProperty("stream");
  });

  it("lets the line's own headers win, case-insensitively", () => {
    const probe = openAiChatAdapter.buildProbe({ ...target, headers: { Authorization: "Basic abc" } }, request);
    expect(probe.headers.authorization).toBe("Basic abc");
    expect(Object.keys(probe.headers).filter((h) => h.toLowerCase() === "authorization")).toHaveLength(1);
  });

  it("sends the headers the openai SDK sends, and nothing that names linewatch", () => {
    const probe = openAiChatAdapter.buildProbe(target, request);
    expect(Object.keys(probe.headers)).toEqual([
      "accept",
      "user-agent",
      "x-stainless-retry-count",
      "x-stainless-lang",
      "x-stainless-package-version",
      "x-stainless-os",
      "x-stainless-arch",
      "x-stainless-runtime",
      "x-stainless-runtime-version",
      "authorization",
      "content-type",
      "accept-language",
      "sec-fetch-mode",
      "x-team",
    ]);
    expect(probe.headers).toMatchObject({ accept: "application/json", "user-agent": `OpenAI/JS ${OPENAI_SDK_VERSION}` });
    const platform = { os: "MacOS", arch: "arm64", runtime: "node", runtimeVersion: "v22.1.0" };
    expect(openAiChatAdapter.buildProbe(target, request, { platform }).headers).toMatchObject({
      "x-stainless-os": "MacOS",
      "x-stainless-arch": "arm64",
      "x-stainless-runtime-version": "v22.1.0",
    });
    expect(JSON.stringify(probe).toLowerCase()).not.toContain("linewatch");
  });

  it("reads content and total tokens of a completion", () => {
    const parsed = openAiChatAdapter.parseResponse(200, OPENAI_BODY);
    expect(parsed).toMatchObject({
      ok: true,
      content: "155",
      tokens: 50,
      usage: { input: 48, output: 2 },
      finishReason: "stop",
      id: "chatcmpl-AbC123",
    });
    expect(parsed.ok && (parsed.json as { model: string }).model).toBe("gpt-4o-mini-2024-07-18");
  });

  it("concatenates the deltas of an SSE stream and rebuilds the body", () => {
    const parsed = openAiChatAdapter.parseResponse(200, OPENAI_SSE);
    expect(parsed).toMatchObject({
      ok: true,
      content: "lw-4f9c is echoed.",
      tokens: 36,
      usage: { input: 30, output: 6 },
      finishReason: "stop",
      id: "chatcmpl-x",
    });
    expect(parsed.ok && parsed.json).toMatchObject({
      model: "gpt-4o-mini",
      choices: [{ message: { content: "lw-4f9c is echoed." }, finish_reason: "stop" }],
      usage: { total_tokens: 36 },
    });
  });

  it("reads a stream with CRLF line ends", () => {
    expect(openAiChatAdapter.parseResponse(200, OPENAI_SSE.replace(/\n/g, "\r\n"))).toMatchObject({
      ok: true,
      content: "lw-4f9c is echoed.",
    });
  });

  it("calls a stream cut before [DONE] and any finish_reason a protocol error", () => {
    const cut = OPENAI_SSE.split("\n").slice(0, 5).join("\n");
    expect(openAiChatAdapter.parseResponse(200, cut)).toMatchObject({ ok: false, errorClass: "protocol" });
  });

  it.each([
    ["null content (all tokens spent elsewhere)", { choices: [{ index: 0, message: { content: null }, finish_reason: "length" }] }, ""],
    [
      "content parts",
      {
        choices: [
          {
            message: {
              content: [
                { type: "text", text: "a" },
                { type: "text", text: "b" },
              ],
            },
          },
        ],
      },
      "ab",
    ],
  ])("reads %s as text", (_name, body, content) => {
    expect(openAiChatAdapter.parseResponse(200, JSON.stringify(body))).toMatchObject({ ok: true, content, tokens: null });
  });

  it.each([
    ["HTML instead of JSON", 200, "<html><body>Bad gateway</body></html>", "parse"],
    ["an error object with 200", 200, '{"error":{"message":"upstream overloaded","type":"server_error"}}', "protocol"],
    ["no choices", 200, '{"id":"x","choices":[]}', "protocol"],
    ["a JSON array", 200, "[1,2]", "protocol"],
    ["a broken stream chunk", 200, "data: {not json\n\n", "parse"],
    ["an error inside the stream", 200, 'data: {"error":{"message":"quota"}}\n\n', "protocol"],
  ] as const)("rejects %s", (_name, status, body, errorClass) => {
    expect(openAiChatAdapter.parseResponse(status, body)).toMatchObject({ ok: false, errorClass });
  });

  it("says what the upstream said on a non-2xx", () => {
    const parsed = openAiChatAdapter.parseResponse(
      429,
      '{"error":{"message":"Rate limit reached for gpt-4o-mini","type":"requests","code":"rate_limit_exceeded"}}',
    );
    expect(parsed).toEqual({ ok: false, errorClass: "protocol", message: "HTTP 429: Rate limit reached for gpt-4o-mini" });
    expect(openAiChatAdapter.parseResponse(502, "")).toEqual({ ok: false, errorClass: "protocol", message: "HTTP 502" });
  });
});

describe("anthropic-messages", () => {
  it("builds POST {baseUrl}/messages as the current SDK does: API version 2026-10-21, the key as a bearer token", () => {
    const probe = anthropicMessagesAdapter.buildProbe({ ...target, baseUrl: "https://api.anthropic.com/v1" }, request);
    expect(probe.url).toBe("https://api.anthropic.com/v1/messages");
    expect(probe.headers).toMatchObject({
      authorization: "Bearer sk-test",
      "anthropic-version": "2026-10-21",
      "user-agent": `Anthropic/JS ${ANTHROPIC_SDK.current.packageVersion}`,
      "x-stainless-timeout": "600",
    });
    expect(probe.headers["x-api-key"]).toBeUndefined();
    expect(JSON.parse(probe.body)).toEqual({ ...request, model: "gpt-4o-mini" });
    expect(Object.keys(JSON.parse(probe.body))[0]).toBe("model");
  });

  it("sends a sample with temperature, top_p or top_k as a 0.x SDK would (2026-10-21 refuses them): 2023-06-01 and x-api-key", () => {
    for (const field of ["temperature", "top_p", "top_k"]) {
      const probe = anthropicMessagesAdapter.buildProbe(target, { ...request, [field]: 0 });
      expect(probe.headers).toMatchObject({
        "x-api-key": "sk-test",
        "anthropic-version": "2023-06-01",
        "user-agent": `Anthropic/JS ${ANTHROPIC_SDK.legacy.packageVersion}`,
      });
      expect(probe.headers.authorization).toBeUndefined();
    }
  });

  it("lets a line's own anthropic-version win, and probes a line pinned to an older version as a 0.x client (x-api-key)", () => {
    const probe = anthropicMessagesAdapter.buildProbe({ ...target, headers: { "Anthropic-Version": "2023-06-01" } }, request);
    expect(probe.headers["anthropic-version"]).toBe("2023-06-01");
    expect(Object.keys(probe.headers).filter((h) => h === "anthropic-version")).toHaveLength(1);
    expect(probe.headers).toMatchObject({ "x-api-key": "sk-test", "user-agent": `Anthropic/JS ${ANTHROPIC_SDK.legacy.packageVersion}` });
    expect(probe.headers.authorization).toBeUndefined();
    const current = anthropicMessagesAdapter.buildProbe({ ...target, headers: { "anthropic-version": "2026-10-21" } }, request);
    expect(current.headers.authorization).toBe("Bearer sk-test");
  });

  it("reads usage with the prompt cache's tokens, the stop reason and the id", () => {
    const body = JSON.stringify({
      ...JSON.parse(ANTHROPIC_BODY),
      stop_reason: "max_tokens",
      usage: { input_tokens: 3, cache_creation_input_tokens: 10, cache_read_input_tokens: 30, output_tokens: 9 },
    });
    expect(anthropicMessagesAdapter.parseResponse(200, body)).toMatchObject({
      ok: true,
      usage: { input: 43, output: 9 },
      tokens: 52,
      finishReason: "max_tokens",
      id: "msg_01XFDUDYJgAACzvnptvVoYEL",
    });
    expect(anthropicMessagesAdapter.parseResponse(200, ANTHROPIC_SSE)).toMatchObject({
      usage: { input: 25, output: 15 },
      finishReason: "end_turn",
      id: "msg_1",
    });
  });

  it("concatenates the text blocks and adds input and output tokens", () => {
    expect(anthropicMessagesAdapter.parseResponse(200, ANTHROPIC_BODY)).toMatchObject({
      ok: true,
      content: "The journey takes 155 minutes.",
      tokens: 50,
    });
  });

  it("reads a stream", () => {
    const parsed = anthropicMessagesAdapter.parseResponse(200, ANTHROPIC_SSE);
    expect(parsed).toMatchObject({ ok: true, content: "Hello world", tokens: 40 });
    expect(parsed.ok && parsed.json).toMatchObject({ stop_reason: "end_turn", usage: { input_tokens: 25, output_tokens: 15 } });
  });

  it.each([
    ["an error body", 200, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', "protocol"],
    ["no content", 200, '{"type":"message"}', "protocol"],
    ["a cut stream", 200, ANTHROPIC_SSE.split("\n").slice(0, 12).join("\n"), "protocol"],
    [
      "an error event",
      200,
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
      "protocol",
    ],
    ["a 529", 529, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', "protocol"],
  ] as const)("rejects %s", (_name, status, body, errorClass) => {
    expect(anthropicMessagesAdapter.parseResponse(status, body)).toMatchObject({ ok: false, errorClass });
  });
});

const RESPONSES_BODY = JSON.stringify({
  id: "resp_68af0c",
  object: "response",
  created_at: 1764450000,
  status: "completed",
  error: null,
  incomplete_details: null,
  model: "gpt-5-mini",
  output: [
    { id: "rs_1", type: "reasoning", summary: [] },
    {
      id: "msg_1",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [
        { type: "output_text", text: "The journey takes ", annotations: [] },
        { type: "output_text", text: "155 minutes.", annotations: [] },
      ],
    },
  ],
  usage: { input_tokens: 41, output_tokens: 9, total_tokens: 50 },
});

const responsesEvent = (type: string, fields: Record<string, unknown>, seq: number) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq, ...fields })}\n\n`;
const RESPONSES_SSE = [
  responsesEvent("response.created", { response: { id: "resp_s", object: "response", status: "in_progress", output: [] } }, 0),
  responsesEvent("response.output_item.added", { output_index: 0, item: { id: "msg_1", type: "message", content: [] } }, 1),
  responsesEvent("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hello" }, 2),
  responsesEvent("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: " world" }, 3),
  responsesEvent(
    "response.completed",
    {
      response: {
        id: "resp_s",
        object: "response",
        status: "completed",
        output: [{ type: "message", content: [{ type: "output_text", text: "Hello world" }] }],
        usage: { input_tokens: 25, output_tokens: 15, total_tokens: 40 },
      },
    },
    4,
  ),
].join("");

describe("openai-responses", () => {
  it("builds POST {baseUrl}/responses with a bearer key and the openai SDK's headers", () => {
    const probe = openAiResponsesAdapter.buildProbe(target, { input: "Say hi", max_output_tokens: 20 }, { stream: true });
    expect(probe.url).toBe("https://free.example.com/v1/responses");
    expect(probe.headers).toMatchObject({ authorization: "Bearer sk-test", "user-agent": `OpenAI/JS ${OPENAI_SDK_VERSION}` });
    expect(JSON.parse(probe.body)).toEqual({ model: "gpt-4o-mini", input: "Say hi", max_output_tokens: 20, stream: true });
  });

  it("reads the output_text of message items, usage, status and id", () => {
    expect(openAiResponsesAdapter.parseResponse(200, RESPONSES_BODY)).toMatchObject({
      ok: true,
      content: "The journey takes 155 minutes.",
      tokens: 50,
      usage: { input: 41, output: 9 },
      finishReason: "completed",
      id: "resp_68af0c",
    });
  });

  it("gives an incomplete answer its reason as the finish reason", () => {
    const body = JSON.stringify({
      ...JSON.parse(RESPONSES_BODY),
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
    });
    expect(openAiResponsesAdapter.parseResponse(200, body)).toMatchObject({ ok: true, finishReason: "max_output_tokens" });
  });

  it("reads a stream: the deltas, and usage and status from response.completed", () => {
    const parsed = openAiResponsesAdapter.parseResponse(200, RESPONSES_SSE);
    expect(parsed).toMatchObject({
      ok: true,
      content: "Hello world",
      tokens: 40,
      usage: { input: 25, output: 15 },
      finishReason: "completed",
      id: "resp_s",
    });
  });

  it.each([
    [
      "a failed response",
      200,
      JSON.stringify({ ...JSON.parse(RESPONSES_BODY), status: "failed", error: { code: "server_error", message: "boom" } }),
      "protocol",
    ],
    ["an error object with 200", 200, '{"error":{"message":"quota","type":"insufficient_quota"}}', "protocol"],
    ["no output", 200, '{"id":"resp_1","object":"response","status":"completed"}', "protocol"],
    ["a queued (background) response", 200, '{"id":"resp_1","status":"queued","output":[]}', "protocol"],
    ["a stream without response.completed", 200, RESPONSES_SSE.slice(0, RESPONSES_SSE.indexOf("event: response.completed")), "protocol"],
    [
      "an error event",
      200,
      `event: error\ndata: ${JSON.stringify({ type: "error", code: "server_error", message: "boom", sequence_number: 1 })}\n\n`,
      "protocol",
    ],
    ["a failed stream", 200, responsesEvent("response.failed", { response: { status: "failed" } }, 1), "protocol"],
    ["not JSON", 200, "<html>nope</html>", "parse"],
  ] as const)("rejects %s", (_name, status, body, errorClass) => {
    expect(openAiResponsesAdapter.parseResponse(status, body)).toMatchObject({ ok: false, errorClass });
  });
});

describe("generic-http", () => {
  it("posts the request as-is to baseUrl", () => {
    const probe = genericHttpAdapter.buildProbe({ ...target, baseUrl: "https://svc.example.com/ask/" }, { q: "hi" });
    expect(probe.url).toBe("https://svc.example.com/ask/");
    expect(JSON.parse(probe.body)).toEqual({ q: "hi" });
    expect(probe.headers.authorization).toBe("Bearer sk-test");
  });

  it("answers with the body text, or the string at contentPath", () => {
    expect(genericHttpAdapter.parseResponse(200, "plain answer")).toEqual({
      ok: true,
      content: "plain answer",
      json: null,
      tokens: null,
      usage: { input: null, output: null },
      finishReason: null,
      id: null,
    });
    const body = '{"output":{"text":"155"},"meta":{"ms":3}}';
    expect(genericHttpAdapter.parseResponse(200, body)).toMatchObject({ ok: true, content: body });
    expect(genericHttpAdapter.parseResponse(200, body, { contentPath: "output.text" })).toMatchObject({ ok: true, content: "155" });
    expect(genericHttpAdapter.parseResponse(200, body, { contentPath: "output.missing" })).toMatchObject({
      ok: false,
      errorClass: "protocol",
    });
    expect(genericHttpAdapter.parseResponse(200, "nope", { contentPath: "a" })).toMatchObject({ ok: false, errorClass: "parse" });
  });
});

describe("adapters", () => {
  it("has one adapter per protocol", () => {
    for (const protocol of PROTOCOLS) {
      expect(getAdapter(protocol).protocol).toBe(protocol);
      expect(adapters[protocol]).toBe(getAdapter(protocol));
    }
  });

  it("parses SSE events with multi-line data and comments", () => {
    expect(parseSse("event: a\ndata: one\ndata:two\n\n: comment\ndata: three")).toEqual([
      { event: "a", data: "one\ntwo" },
      { event: null, data: "three" },
    ]);
  });
});
