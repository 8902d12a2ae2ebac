// How the lab reads a prompt: which nonce to echo and what kind of answer is asked for.
import { describe, expect, it } from "vitest";
import { findNonce, recognise, viewChat } from "../../../packages/lab/src/prompt";

const user = (content: string, system?: string) =>
  viewChat([...(system ? [{ role: "system", content: system }] : []), { role: "user", content }], undefined);

describe("findNonce", () => {
  it.each([
    ["Repeat this token exactly as written: lw-3f9a2c7d1e", "lw-3f9a2c7d1e"],
    ["Request id: lw-abc_DEF-123.", "lw-abc_DEF-123"],
    ["Request id: Zq81xYtR0p.", "Zq81xYtR0p"],
    ["token = 0123456789abcdef", "0123456789abcdef"],
    ["why tokens are echoed: a1b2c3d4e5", "a1b2c3d4e5"],
    ["Request id: {{nonce}}.", "{{nonce}}"],
    ["In about 100 words, explain load balancing.", null],
    ["Short: abc123", null],
  ])("%s → %s", (text, nonce) => {
    expect(findNonce(text)).toBe(nonce);
  });
});

describe("recognise", () => {
  it("a JSON request from the system prompt, with the keys and types the user names", () => {
    const kind = recognise(
      user(
        'Describe the city of Lyon as a JSON object with the keys "city" (string), "population" (number), "tags" (a list of two strings), "open" (boolean).',
        "Reply with a single JSON object.",
      ),
    );
    expect(kind).toEqual({
      kind: "json",
      subject: "Lyon",
      keys: [
        { name: "city", kind: { type: "string" } },
        { name: "population", kind: { type: "number" } },
        { name: "tags", kind: { type: "array", count: 2, of: "string" } },
        { name: "open", kind: { type: "boolean" } },
      ],
    });
  });

  it("response_format json_object counts as a JSON request", () => {
    const view = viewChat([{ role: "user", content: "Give me data." }], { type: "json_object" });
    expect(recognise(view)).toMatchObject({ kind: "json", keys: [] });
  });

  it.each([
    [
      "A train leaves at 14:35 and arrives at 17:10 the same day. How many minutes does the journey take?",
      { kind: "minutes", minutes: 155 },
    ],
    ["A night bus leaves at 23:50 and arrives at 01:05. How many minutes is that?", { kind: "minutes", minutes: 75 }],
    ["In about 100 words (around 600 characters), explain it.", { kind: "long", targetChars: 600 }],
    ["In about 50 words, explain it.", { kind: "long", targetChars: 300 }],
    ["Repeat this token: lw-0011aabbcc", { kind: "echo", nonce: "lw-0011aabbcc" }],
    ["What should I cook tonight?", { kind: "generic" }],
  ])("%s", (text, expected) => {
    expect(recognise(user(text))).toEqual(expected);
  });
});
