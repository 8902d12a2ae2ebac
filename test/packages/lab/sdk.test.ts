// The official SDKs, unchanged, read the lab's answers on every protocol it speaks: text, a system
// prompt, a tool call, streams, token counts, and its errors as the SDK's own typed errors.
import Anthropic from "@anthropic-ai/sdk";
import { type Lab, startLab } from "@linewatch/lab";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

let lab: Lab;
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  lab = await startLab({ lines: [{ name: "claude", apiKey: "sk-claude" }, { name: "gpt" }] });
  // The Anthropic SDK's base URL is the host: it adds /v1/messages itself.
  anthropic = new Anthropic({ baseURL: lab.baseUrl("claude").replace(/\/v1$/, ""), apiKey: "sk-claude", maxRetries: 0 });
  openai = new OpenAI({ baseURL: lab.baseUrl("gpt"), apiKey: "unused", maxRetries: 0 });
});
afterAll(() => lab.close());
beforeEach(() => {
  lab.setMode("claude", "ok");
  lab.setMode("gpt", "ok");
});

const weatherTool = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } } },
};

describe("@anthropic-ai/sdk against the lab", () => {
  it("messages.create: text, with a system prompt asking for JSON", async () => {
    const message = await anthropic.messages.create({
      model: "claude-lab",
      max_tokens: 200,
      system: "Reply with a single JSON object and nothing else.",
      messages: [
        { role: "user", content: 'Describe the city of Lyon as a JSON object with the keys "city" (string) and "country" (string).' },
      ],
    });
    expect(message).toMatchObject({ type: "message", role: "assistant", model: "claude-lab", stop_reason: "end_turn" });
    const text = message.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(JSON.parse(text)).toMatchObject({ city: "Lyon", country: "France" });
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it("messages.create: a tool call", async () => {
    const message = await anthropic.messages.create({
      model: "claude-lab",
      max_tokens: 100,
      tools: [weatherTool],
      messages: [{ role: "user", content: "Use get_weather for Paris." }],
    });
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([expect.objectContaining({ type: "tool_use", name: "get_weather", input: {} })]);
  });

  it("messages.stream: the text and the final message; a tool call streamed", async () => {
    const stream = anthropic.messages.stream({
      model: "claude-lab",
      max_tokens: 300,
      messages: [{ role: "user", content: "In about 100 words, explain why status codes are not enough." }],
    });
    let streamed = "";
    stream.on("text", (t) => {
      streamed += t;
    });
    const final = await stream.finalMessage();
    expect(streamed.length).toBeGreaterThan(300);
    expect(final.content[0]).toMatchObject({ type: "text", text: streamed });
    const tool = await anthropic.messages
      .stream({ model: "claude-lab", max_tokens: 100, tools: [weatherTool], messages: [{ role: "user", content: "Call get_weather." }] })
      .finalMessage();
    expect(tool.content[0]).toMatchObject({ type: "tool_use", name: "get_weather", input: {} });
  });

  it("messages.countTokens", async () => {
    const count = await anthropic.messages.countTokens({ model: "claude-lab", messages: [{ role: "user", content: "x".repeat(40) }] });
    expect(count.input_tokens).toBe(10);
  });

  it("raises the SDK's typed errors for the lab's statuses, and for an error event in a stream", async () => {
    const ask = () => anthropic.messages.create({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
    lab.setMode("claude", "errors", { status: 529 });
    await expect(ask()).rejects.toBeInstanceOf(Anthropic.OverloadedError);
    lab.setMode("claude", "rate-limit", { retryAfterSec: 1 });
    await expect(ask()).rejects.toBeInstanceOf(Anthropic.RateLimitError);
    lab.setMode("claude", "cut", { how: "error" });
    const stream = anthropic.messages.stream({
      model: "m",
      max_tokens: 300,
      messages: [{ role: "user", content: "In about 100 words, say hi." }],
    });
    await expect(stream.finalMessage()).rejects.toThrow(/Overloaded/);
  });
});

describe("openai responses against the lab", () => {
  it("responses.create: output_text, usage and a function call", async () => {
    const response = await openai.responses.create({
      model: "gpt-lab",
      instructions: "Be brief.",
      input: "How many minutes from 14:35 to 17:10?",
    });
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("155");
    expect(response.usage?.total_tokens).toBeGreaterThan(0);
    const call = await openai.responses.create({
      model: "gpt-lab",
      input: "Use get_weather for Paris.",
      tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: {} }, strict: false }],
    });
    expect(call.output[0]).toMatchObject({ type: "function_call", name: "get_weather", arguments: "{}" });
  });

  it("responses.create with stream: true: deltas, then response.completed", async () => {
    const stream = await openai.responses.create({ model: "gpt-lab", input: "In about 100 words, explain status codes.", stream: true });
    let text = "";
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(text.length).toBeGreaterThan(300);
  });

  it("chat completions: a tool call", async () => {
    const completion = await openai.chat.completions.create({
      model: "gpt-lab",
      messages: [{ role: "user", content: "Use get_weather for Paris." }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }],
    });
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({ type: "function", function: { name: "get_weather" } });
  });
});
