// parseModeRequest: a table of inputs → settings or errors naming the field.

import { LAB_MODES, type ModeSetting, parseModeRequest } from "@linewatch/lab";
import { describe, expect, it } from "vitest";

describe("parseModeRequest", () => {
  it.each<[unknown, ModeSetting]>([
    [{ mode: "ok" }, { mode: "ok" }],
    [{ mode: "truncate" }, { mode: "truncate", fraction: 0.3 }],
    [
      { mode: "truncate", fraction: 0.75 },
      { mode: "truncate", fraction: 0.75 },
    ],
    [{ mode: "drop-fields" }, { mode: "drop-fields", fields: null }],
    [
      { mode: "drop-fields", fields: ["a"] },
      { mode: "drop-fields", fields: ["a"] },
    ],
    [{ mode: "stale" }, { mode: "stale" }],
    [{ mode: "downgrade" }, { mode: "downgrade" }],
    [{ mode: "slow" }, { mode: "slow", latencyMs: 2000 }],
    [
      { mode: "slow", latencyMs: 50 },
      { mode: "slow", latencyMs: 50 },
    ],
    [{ mode: "errors" }, { mode: "errors", status: 500, rate: 1 }],
    [
      { mode: "errors", status: 503, rate: 0.25 },
      { mode: "errors", status: 503, rate: 0.25 },
    ],
    [{ mode: "rate-limit" }, { mode: "rate-limit", retryAfterSec: 20, rate: 1 }],
    [{ mode: "hang" }, { mode: "hang" }],
    [{ mode: "flaky" }, { mode: "flaky", fault: { mode: "errors", status: 500, rate: 1 } }],
    [
      { mode: "flaky", fault: "slow", latencyMs: 10 },
      { mode: "flaky", fault: { mode: "slow", latencyMs: 10 } },
    ],
  ])("%j → %j", (input, expected) => {
    expect(parseModeRequest(input)).toEqual({ ok: true, value: expected });
  });

  it.each<[unknown, RegExp]>([
    [null, /JSON object/],
    ["ok", /JSON object/],
    [{}, /mode must be one of/],
    [{ mode: "OK" }, /mode must be one of/],
    [{ mode: "truncate", fraction: 1.5 }, /fraction/],
    [{ mode: "truncate", fraction: "half" }, /fraction/],
    [{ mode: "slow", latencyMs: 1.5 }, /latencyMs must be an integer/],
    [{ mode: "errors", status: 302 }, /status/],
    [{ mode: "errors", rate: -0.1 }, /rate/],
    [{ mode: "rate-limit", retryAfterSec: -1 }, /retryAfterSec/],
    [{ mode: "drop-fields", fields: [] }, /fields/],
    [{ mode: "drop-fields", fields: [1] }, /fields/],
    [{ mode: "ok", fraction: 0.5 }, /unknown parameter `fraction` for mode ok/],
    [{ mode: "flaky", fault: "flaky" }, /fault must be one of/],
    [{ mode: "flaky", fault: "hang", status: 500 }, /unknown parameter `status`/],
  ])("%j is rejected", (input, message) => {
    const result = parseModeRequest(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(message);
  });

  it("knows every documented mode", () => {
    expect(LAB_MODES).toEqual([
      "ok",
      "truncate",
      "drop-fields",
      "stale",
      "downgrade",
      "slow",
      "errors",
      "rate-limit",
      "hang",
      "long-prompt",
      "cut",
      "substitute",
      "inflate-usage",
      "shape-change",
      "recognise-probes",
      "flaky",
    ]);
  });

  it("cut: defaults, its kinds, and bad parameters named", () => {
    expect(parseModeRequest({ mode: "cut" })).toEqual({ ok: true, value: { mode: "cut", at: 0.5, how: "end" } });
    expect(parseModeRequest({ mode: "cut", at: 0.2, how: "error" })).toEqual({ ok: true, value: { mode: "cut", at: 0.2, how: "error" } });
    expect(parseModeRequest({ mode: "cut", at: 2 })).toMatchObject({ ok: false, error: expect.stringMatching(/^at must be/) });
    expect(parseModeRequest({ mode: "cut", how: "later" })).toMatchObject({ ok: false, error: expect.stringMatching(/^how must be/) });
    expect(parseModeRequest({ mode: "flaky", fault: "cut", how: "error" })).toEqual({
      ok: true,
      value: { mode: "flaky", fault: { mode: "cut", at: 0.5, how: "error" } },
    });
  });

  it("long-prompt: defaults, its answer kinds, and a bad answer kind named", () => {
    expect(parseModeRequest({ mode: "long-prompt" })).toEqual({
      ok: true,
      value: { mode: "long-prompt", minPromptChars: 400, answer: "empty" },
    });
    expect(parseModeRequest({ mode: "long-prompt", minPromptChars: 10, answer: "masked-error" })).toEqual({
      ok: true,
      value: { mode: "long-prompt", minPromptChars: 10, answer: "masked-error" },
    });
    const bad = parseModeRequest({ mode: "long-prompt", answer: "nothing" });
    expect(bad.ok).toBe(false);
    expect(bad.ok ? "" : bad.error).toMatch(/^answer must be/);
  });
});
