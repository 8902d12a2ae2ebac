import { fillTemplate, probeNonce } from "@linewatch/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const NOW = Date.UTC(2026, 10, 29, 21, 0, 0);

describe("fillTemplate", () => {
  it("fills {{nonce}} and {{now}} in every string, deep", () => {
    const request = {
      messages: [
        { role: "system", content: "Time: {{now}}" },
        { role: "user", content: "Echo {{nonce}} and {{nonce}} again" },
      ],
      max_tokens: 200,
      temperature: 0,
      metadata: { tags: ["{{nonce}}", 3, true, null] },
    };
    expect(fillTemplate(request, { nonce: "lw-abc", now: NOW })).toEqual({
      messages: [
        { role: "system", content: "Time: 2026-11-29T21:00:00.000Z" },
        { role: "user", content: "Echo lw-abc and lw-abc again" },
      ],
      max_tokens: 200,
      temperature: 0,
      metadata: { tags: ["lw-abc", 3, true, null] },
    });
  });

  it("returns a copy and leaves the template alone", () => {
    const request = { messages: [{ role: "user", content: "{{nonce}}" }] };
    const filled = fillTemplate(request, { nonce: "lw-1", now: NOW });
    expect(request.messages[0]?.content).toBe("{{nonce}}");
    expect(filled.messages).not.toBe(request.messages);
    expect(filled.messages[0]).not.toBe(request.messages[0]);
  });

  it("keeps unknown placeholders, keys and replacement patterns literally", () => {
    expect(fillTemplate({ "{{nonce}}": "{{model}} {{ nonce }}" }, { nonce: "x", now: NOW })).toEqual({
      "{{nonce}}": "{{model}} {{ nonce }}",
    });
    expect(fillTemplate("a {{nonce}} b", { nonce: "$&$'$1", now: NOW })).toBe("a $&$'$1 b");
  });

  it("keeps a __proto__ key as data", () => {
    const request = JSON.parse('{"__proto__": {"polluted": "{{nonce}}"}}') as Record<string, unknown>;
    const filled = fillTemplate(request, { nonce: "n1", now: NOW });
    expect(Object.getPrototypeOf(filled)).toBe(Object.prototype);
    expect(Object.hasOwn(filled, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("fills a placeholder that a short nonce completes", () => {
    expect(fillTemplate("{{{{nonce}}ce}}", { nonce: "non", now: NOW })).toBe("non");
  });

  it.each(["", "{x}", "a}}"])("rejects the nonce %j", (nonce) => {
    expect(() => fillTemplate({}, { nonce, now: NOW })).toThrow(RangeError);
  });

  it("rejects a now that is not a time", () => {
    expect(() => fillTemplate({}, { nonce: "n", now: Number.NaN })).toThrow(RangeError);
  });

  const fragments = fc.array(
    fc.oneof(fc.constantFrom("{{", "}}", "{", "}", "nonce", "now", "{{nonce}}", "{{now}}", "ce}}", "{{non"), fc.string()),
    { maxLength: 12 },
  );
  const template = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: "small" },
      fragments.map((parts) => parts.join("")),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie("node"), { maxLength: 4 }),
      fc.dictionary(fc.string({ maxLength: 6 }), tie("node"), { maxKeys: 4 }),
    ),
  })).node;
  const nonce = fc.string({ minLength: 1, maxLength: 24 }).filter((s) => !/[{}]/.test(s));

  it("never leaves {{nonce}} or {{now}} (property)", () => {
    fc.assert(
      fc.property(template, nonce, fc.integer({ min: 0, max: 4_102_444_800_000 }), (t, n, now) => {
        for (const text of strings(fillTemplate(t, { nonce: n, now }))) {
          expect(text).not.toContain("{{nonce}}");
          expect(text).not.toContain("{{now}}");
        }
      }),
    );
  });

  it("changes nothing but strings (property)", () => {
    fc.assert(
      fc.property(template, nonce, (t, n) => {
        expect(shape(fillTemplate(t, { nonce: n, now: NOW }))).toEqual(shape(t));
      }),
    );
  });
});

/** The string values (keys are not filled, so they may keep a placeholder). */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(strings);
  return [];
}

function shape(value: unknown): unknown {
  if (typeof value === "string") return "<string>";
  if (Array.isArray(value)) return value.map(shape);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(v)]));
  }
  return value;
}

describe("probeNonce", () => {
  it("is 12 letters and digits, a letter first and at least one digit, with nothing that names linewatch", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 12, maxLength: 12 }), (bytes) => {
        const nonce = probeNonce(bytes);
        expect(nonce).toMatch(/^[a-z][a-z0-9]{11}$/);
        expect(nonce).toMatch(/[0-9]/);
        expect(nonce.startsWith("lw")).toBe(false);
      }),
    );
    expect(probeNonce(new Uint8Array(12))).toMatch(/^a[a0-9]{11}$/);
    expect(() => probeNonce(new Uint8Array(4))).toThrow(RangeError);
  });
});
