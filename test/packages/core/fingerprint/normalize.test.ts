// A fingerprint answer's class, by table: what the prompt asked for, without the wrapping.
import { describe, expect, it } from "vitest";
import {
  type FingerprintExpect,
  LONG_ANSWER,
  NO_ANSWER,
  normalizeFingerprintAnswer,
} from "../../../../packages/core/src/fingerprint/index";

const number: FingerprintExpect = { form: "number" };
const fruit: FingerprintExpect = { form: "choice", options: ["apple", "banana", "cherry", "grape", "mango"] };
const ab: FingerprintExpect = { form: "choice", options: ["A", "B"] };
const word: FingerprintExpect = { form: "word" };
const letters: FingerprintExpect = { form: "letters" };

const ROWS: Array<[string, FingerprintExpect, string, string]> = [
  ["a bare number", number, "7", "7"],
  ["a number with a period", number, "7.", "7"],
  ["a number in bold", number, "**42**", "42"],
  ["a number in a sentence", number, "I'd pick 7.", "7"],
  ["a number with leading zeros", number, "07", "7"],
  ["a number word", number, "Seven", "7"],
  ["the first number of two", number, "Between 3 and 9, I choose 3.", "3"],
  ["a full-width number", number, "７", "7"],
  ["a sentence without a number", number, "I cannot pick numbers at random, but I can explain how.", LONG_ANSWER],
  ["a word without a number", number, "Random", NO_ANSWER],
  ["an empty answer", number, "   ", NO_ANSWER],
  ["a choice, exactly", fruit, "Banana", "banana"],
  ["a choice in bold with a period", fruit, "**Mango**.", "mango"],
  ["a choice in a sentence", fruit, "I would pick the cherry, thanks.", "cherry"],
  ["the first of two choices named", fruit, "Grape, though apple is close.", "grape"],
  ["no option named", fruit, "Kiwi", NO_ANSWER],
  ["a letter option", ab, "B", "b"],
  ["a letter option in words", ab, "Option A", "a"],
  ["a letter is also an article in a long answer", ab, "I would take a long look at both offers before choosing.", LONG_ANSWER],
  ["one word", word, "Owl.", "owl"],
  ["a two-word name", word, "Open AI", "openai"],
  ["a sentence for one word", word, "If I were an animal I would be an owl.", LONG_ANSWER],
  ["letters without spaces", letters, "HTHTTHHTHT", "hthtthhtht"],
  ["letters with spaces and commas", letters, "H, T, H, T, T, H, H, T, H, T", "hthtthhtht"],
  ["a paragraph", word, "x".repeat(130), LONG_ANSWER],
];

describe("normalizeFingerprintAnswer", () => {
  it.each(ROWS)("%s", (_name, spec, content, want) => {
    expect(normalizeFingerprintAnswer(content, spec)).toBe(want);
  });

  it("is stable: the same text always gives the same class, and a class is at most 40 characters", () => {
    const long = "HT".repeat(30);
    expect(normalizeFingerprintAnswer(long, letters)).toBe(normalizeFingerprintAnswer(long, letters));
    expect([...normalizeFingerprintAnswer(long, letters)].length).toBe(40);
  });
});
