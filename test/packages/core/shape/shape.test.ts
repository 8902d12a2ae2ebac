// The answers' protocol shape: id formats and field paths, by table.
import { describe, expect, it } from "vitest";
import { bodyFields, describeShapeChange, idFormat, shapeSignature, stepShape } from "../../../../packages/core/src/shape/index";

describe("id formats", () => {
  it.each([
    ["chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "chatcmpl-{an29}"],
    ["msg_01XFDUDYJgAACzvnptvVoYEL", "msg_{an24}"],
    ["resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b", "resp_{hex48}"],
    ["chatcmpl-0f8fad5b-d9cb-469f-a165-70867728950e", "chatcmpl-{uuid}"],
    ["0f8fad5b-d9cb-469f-a165-70867728950e", "{uuid}"],
    ["1717171717", "{digits10}"],
    ["gen-1717-abc", "gen-{other8}"],
    ["", "none"],
  ])("%s → %s", (id, want) => {
    expect(idFormat(id)).toBe(want);
  });
  it("no id", () => expect(idFormat(null)).toBe("none"));
});

describe("field paths", () => {
  it("keys at every depth (arrays by their first element), values ignored, tool arguments opaque", () => {
    const body = {
      id: "x",
      choices: [
        { index: 0, message: { role: "assistant", content: "7", tool_calls: [{ function: { arguments: { a: 1 } } }] }, logprobs: null },
      ],
      usage: { prompt_tokens: 3, prompt_tokens_details: { cached_tokens: 0 } },
      system_fingerprint: "fp_1",
    };
    expect(bodyFields(body)).toEqual([
      "choices",
      "choices[].index",
      "choices[].logprobs",
      "choices[].message",
      "choices[].message.content",
      "choices[].message.role",
      "choices[].message.tool_calls",
      "choices[].message.tool_calls[].function",
      "choices[].message.tool_calls[].function.arguments",
      "id",
      "system_fingerprint",
      "usage",
      "usage.prompt_tokens",
      "usage.prompt_tokens_details",
      "usage.prompt_tokens_details.cached_tokens",
    ]);
    expect(bodyFields(null)).toEqual([]);
    expect(bodyFields("text")).toEqual([]);
  });

  it("the signature is the id's format and the sorted, distinct fields; the same for the same shape", () => {
    expect(shapeSignature({ id: "msg_xyz", fields: ["b", "a", "b"] })).toBe("msg_{an3} a,b");
    expect(describeShapeChange("msg_{an3} a,b", "{uuid} a,c")).toBe(
      "the answers' protocol shape changed (id msg_{an3} → {uuid}; fields gone: b; new fields: c)",
    );
  });

  it("stepShape never mutates its input", () => {
    const t = { shares: { a: 1 }, n: 30, strangers: 0, changedAt: null, changedTo: null };
    const copy = JSON.parse(JSON.stringify(t));
    stepShape(t, "b", true, 0);
    expect(t).toEqual(copy);
  });
});
