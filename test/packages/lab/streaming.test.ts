// stream: true answers as SSE chunks that assemble to the same content as a plain answer.

import { type Lab, type LineOptions, startLab } from "@linewatch/lab";
import { afterEach, describe, expect, it } from "vitest";
import { chat, chatStream, nextNonce, post, probeBody, sample, shippedSamples } from "./lab-helpers";

const labs: Lab[] = [];
afterEach(async () => {
  await Promise.all(labs.splice(0).map((l) => l.close()));
});

/** The same line twice: one answers plainly, the other streams. */
async function twins(options: Omit<LineOptions, "name"> = {}): Promise<{ plain: string; streamed: string }> {
  const a = await startLab({ lines: [{ name: "s", seed: 5, ...options }] });
  const b = await startLab({ lines: [{ name: "s", seed: 5, ...options }] });
  labs.push(a, b);
  return { plain: a.baseUrl("s"), streamed: b.baseUrl("s") };
}

type Chunk = {
  object: string;
  id: string;
  model: string;
  choices: { delta: Record<string, unknown>; finish_reason: string | null }[];
  usage?: unknown;
};

describe("streaming", () => {
  it.each([...shippedSamples().keys()])("%s: the chunks assemble to the non-streamed content", async (name) => {
    const { plain, streamed } = await twins();
    for (let i = 0; i < 3; i++) {
      const body = probeBody(sample(name), nextNonce());
      const whole = await chat(plain, body);
      const stream = await chatStream(streamed, body);
      expect(stream.status).toBe(200);
      expect(stream.contentType).toMatch(/^text\/event-stream/);
      expect(stream.done).toBe(true);
      expect(stream.content).toBe(whole.content);
    }
  });

  it("splits even a short answer into several chat.completion.chunk events", async () => {
    const { streamed } = await twins();
    const stream = await chatStream(streamed, probeBody(sample("travel-minutes"), nextNonce(), { model: "m-1" }));
    const chunks = stream.events as Chunk[];
    const withContent = chunks.filter((c) => typeof c.choices[0]?.delta.content === "string" && c.choices[0].delta.content !== "");
    expect(withContent.length).toBeGreaterThanOrEqual(3);
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "m-1" && c.id === chunks[0]?.id)).toBe(true);
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.some((c) => c.usage)).toBe(false);
  });

  it("sends usage in a last chunk only when stream_options.include_usage asks, and not under drop-fields", async () => {
    const { streamed } = await twins();
    const asked = await chatStream(streamed, probeBody(sample("nonce-echo"), nextNonce(), { stream_options: { include_usage: true } }));
    const last = asked.events.at(-1) as Chunk;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ total_tokens: expect.any(Number) });

    const dropped = await twins({ mode: "drop-fields" });
    const none = await chatStream(
      dropped.streamed,
      probeBody(sample("nonce-echo"), nextNonce(), { stream_options: { include_usage: true } }),
    );
    expect((none.events as Chunk[]).some((c) => c.usage)).toBe(false);
  });

  it.each([
    ["truncate", { mode: "truncate", fraction: 0.3 }],
    ["downgrade", "downgrade"],
    ["drop-fields", "drop-fields"],
  ] as const)("%s applies to streamed content the same way", async (_name, mode) => {
    const { plain, streamed } = await twins({ mode });
    for (const name of ["long-explainer", "json-fields"]) {
      const body = probeBody(sample(name), nextNonce());
      expect((await chatStream(streamed, body)).content).toBe((await chat(plain, body)).content);
    }
  });

  it("stale streams the replayed answer", async () => {
    const l = await startLab({ lines: [{ name: "s" }] });
    labs.push(l);
    const earlier = await chat(l.baseUrl("s"), probeBody(sample("nonce-echo"), nextNonce()));
    l.setMode("s", "stale");
    const replay = await chatStream(l.baseUrl("s"), probeBody(sample("nonce-echo"), nextNonce()));
    expect(replay.content).toBe(earlier.content);
  });

  it("paces chunks with streamChunkDelayMs and still assembles the same content", async () => {
    const { plain } = await twins();
    const paced = await startLab({ lines: [{ name: "s", seed: 5, streamChunkDelayMs: 5 }] });
    labs.push(paced);
    const body = probeBody(sample("long-explainer"), nextNonce());
    expect((await chatStream(paced.baseUrl("s"), body)).content).toBe((await chat(plain, body)).content);
  });

  it("streams /v1/completions as text_completion events", async () => {
    const { streamed } = await twins();
    const res = await post(`${streamed}/completions`, { prompt: "Say something.", stream: true });
    const text = await res.text();
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(text).toContain('"object":"text_completion"');
  });
});
