import {
  adapters,
  anthropicMessagesAdapter,
  genericHttpAdapter,
  getAdapter,
  openAiChatAdapter,
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

  it("reads content and total tokens of a completion", () => {
    const parsed = openAiChatAdapter.parseResponse(200, OPENAI_BODY);
    expect(parsed).toMatchObject({ ok: true, content: "155", tokens: 50 });
    expect(parsed.ok && (parsed.json as { model: string }).model).toBe("gpt-4o-mini-2024-07-18");
  });

  it("concatenates the deltas of an SSE stream and rebuilds the body", () => {
    const parsed = openAiChatAdapter.parseResponse(200, OPENAI_SSE);
    expect(parsed).toMatchObject({ ok: true, content: "lw-4f9c is echoed.", tokens: 36 });
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
  it("builds POST {baseUrl}/messages with x-api-key and anthropic-version", () => {
    const probe = anthropicMessagesAdapter.buildProbe({ ...target, baseUrl: "https://api.anthropic.com/v1" }, request);
    expect(probe.url).toBe("https://api.anthropic.com/v1/messages");
    expect(probe.headers).toMatchObject({ "x-api-key": "sk-test", "anthropic-version": "2023-06-01" });
    expect(probe.headers.authorization).toBeUndefined();
    expect(JSON.parse(probe.body)).toEqual({ ...request, model: "gpt-4o-mini" });
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

describe("generic-http", () => {
  it("posts the request as-is to baseUrl", () => {
    const probe = genericHttpAdapter.buildProbe({ ...target, baseUrl: "https://svc.example.com/ask/" }, { q: "hi" });
    expect(probe.url).toBe("https://svc.example.com/ask/");
    expect(JSON.parse(probe.body)).toEqual({ q: "hi" });
    expect(probe.headers.authorization).toBe("Bearer sk-test");
  });

  it("answers with the body text, or the string at contentPath", () => {
    expect(genericHttpAdapter.parseResponse(200, "plain answer")).toEqual({ ok: true, content: "plain answer", json: null, tokens: null });
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
