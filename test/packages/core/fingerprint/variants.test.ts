// A sample's phrasings: where the prompt is in each protocol's request, and which one a probe sends.
import { describe, expect, it } from "vitest";
import {
  checkVariants,
  phrasings,
  pickPhrasing,
  promptText,
  variantKey,
  withPhrasing,
} from "../../../../packages/core/src/fingerprint/index";

const chat = {
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Pick a number." },
  ],
  max_tokens: 8,
  temperature: 0,
};
const anthropic = { messages: [{ role: "user", content: [{ type: "text", text: "Pick a number." }] }], max_tokens: 8, temperature: 0 };
const responsesText = { input: "Pick a number.", max_output_tokens: 16, temperature: 0 };
const responsesItems = { input: [{ role: "user", content: [{ type: "input_text", text: "Pick a number." }] }], temperature: 0 };

describe("phrasings", () => {
  it.each([
    ["chat", chat],
    ["anthropic content parts", anthropic],
    ["responses, a string", responsesText],
    ["responses, items", responsesItems],
  ])("%s: the prompt is found and replaced, the rest kept, the request never changed", (_name, request) => {
    const before = JSON.stringify(request);
    expect(promptText(request)).toBe("Pick a number.");
    const other = withPhrasing(request, "Choose a number.");
    expect(promptText(other)).toBe("Choose a number.");
    expect(JSON.stringify(request)).toBe(before);
    expect({ ...other, messages: undefined, input: undefined }).toEqual({ ...request, messages: undefined, input: undefined });
  });

  it("a request without a user prompt cannot take phrasings", () => {
    expect(promptText({ prompt: "legacy" })).toBeNull();
    expect(withPhrasing({ prompt: "legacy" }, "x")).toEqual({ prompt: "legacy" });
    expect(checkVariants({ prompt: "legacy" }, ["x"])).toEqual(["variants: the request has no user prompt a phrasing can replace"]);
  });

  it("picks among the request's own prompt and its variants, keyed by the text", () => {
    const sample = { request: chat, variants: ["Choose a number.", "Name a number."] };
    expect(phrasings(sample)).toEqual(["Pick a number.", "Choose a number.", "Name a number."]);
    expect(pickPhrasing(sample, () => 0)).toEqual({ request: chat, variant: variantKey("Pick a number.") });
    const last = pickPhrasing(sample, () => 0.99);
    expect(last.variant).toBe(variantKey("Name a number."));
    expect(promptText(last.request)).toBe("Name a number.");
    expect(pickPhrasing({ request: chat }, () => 0.5).variant).toBe(variantKey("Pick a number."));
    // The key is the text's: reordering the variants keeps each phrasing's anchors.
    expect(variantKey("Name a number.")).toBe(variantKey(" Name a number. "));
  });

  it("bad variants are named", () => {
    expect(checkVariants(chat, undefined)).toEqual([]);
    expect(checkVariants(chat, "one")).toEqual(["variants: a list of phrasings (strings)"]);
    expect(
      checkVariants(
        chat,
        Array.from({ length: 9 }, (_, i) => `p${i}`),
      ),
    ).toEqual(["variants: at most 8"]);
    expect(checkVariants(chat, [""])).toEqual(["variants: each a non-empty string of at most 4000 characters"]);
  });
});
