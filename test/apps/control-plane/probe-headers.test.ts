// Probes that look like traffic (docs/scoring.md#what-a-relay-can-fake): a probe carries nothing that
// marks it as one — no product name in any header, user agent or body — and the header set the
// protocol's official SDK sends, here compared with what the pinned SDKs actually send to the same lab.
// The control plane probes real lab lines of every protocol with the shipped samples.
import Anthropic from "@anthropic-ai/sdk";
import { type Lab, type RecordedRequest, startLab } from "@linewatch/lab";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLine, createRoute, probeNow, type ResultView } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";

const PROTOCOLS = ["openai-chat", "openai-responses", "anthropic-messages"] as const;
type Protocol = (typeof PROTOCOLS)[number];

let cp: TestControlPlane;
let lab: Lab;
const results = new Map<Protocol, ResultView[]>();

/** What the HTTP client adds (not the SDK's choice), and what a probe leaves out on purpose (sdk-headers.ts). */
const NOT_COMPARED = new Set(["host", "connection", "content-length", "accept-encoding"]);

const names = (r: RecordedRequest) => r.headers.map(([k]) => k.toLowerCase()).filter((k) => !NOT_COMPARED.has(k));
const headerValue = (r: RecordedRequest, name: string) => r.headers.find(([k]) => k.toLowerCase() === name)?.[1];

beforeAll(async () => {
  lab = await startLab({
    lines: PROTOCOLS.flatMap((p) => [
      { name: `probed-${p}`, apiKey: "sk-line-key" },
      { name: `sdk-${p}`, apiKey: "sk-line-key" },
    ]),
  });
  cp = await startTestControlPlane();
  await createRoute(cp, "everything");
  for (const protocol of PROTOCOLS) {
    const line = await createLine(cp, {
      name: `line-${protocol}`,
      protocol,
      baseUrl: lab.baseUrl(`probed-${protocol}`),
      apiKey: "sk-line-key",
      routes: [{ route: "everything", weight: 10 }],
    });
    results.set(protocol, await probeNow(cp, line.id));
  }
  // The same kinds of request, made by the official SDKs.
  const anthropic = new Anthropic({
    baseURL: lab.baseUrl("sdk-anthropic-messages").replace(/\/v1$/, ""),
    apiKey: "sk-line-key",
    maxRetries: 0,
  });
  await anthropic.messages.create({ model: "lab-model", max_tokens: 20, messages: [{ role: "user", content: "hi" }] });
  const chat = new OpenAI({ baseURL: lab.baseUrl("sdk-openai-chat"), apiKey: "sk-line-key", maxRetries: 0 });
  await chat.chat.completions.create({ model: "lab-model", messages: [{ role: "user", content: "hi" }] });
  const responses = new OpenAI({ baseURL: lab.baseUrl("sdk-openai-responses"), apiKey: "sk-line-key", maxRetries: 0 });
  await responses.responses.create({ model: "lab-model", input: "hi" });
}, 120_000);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

describe.each(PROTOCOLS)("probes of a %s line", (protocol) => {
  it("pass on the shipped samples of the protocol, one probe per sample", () => {
    const r = results.get(protocol) ?? [];
    expect(r.map((x) => x.sample).sort()).toEqual(
      ["json-fields", "long-explainer", "nonce-echo", "travel-minutes"].map((k) =>
        protocol === "openai-chat" ? k : `${protocol === "anthropic-messages" ? "anthropic" : "responses"}-${k}`,
      ),
    );
    for (const x of r) expect(x.passed, `${x.sample}: ${x.reasons.join("; ")}`).toBe(true);
  });

  it("carry nothing that names linewatch: no header, user agent or body, and no `lw-` nonce", () => {
    const probes = lab.requests(`probed-${protocol}`);
    expect(probes).toHaveLength(4);
    for (const p of probes) {
      const all = JSON.stringify(p).toLowerCase();
      expect(all).not.toContain("linewatch");
      expect(all).not.toMatch(/\blw-/);
      expect(Object.keys(JSON.parse(p.body) as object)[0]).toBe("model");
    }
  });

  it("send the header set the official SDK sends, with the same values (the key aside)", () => {
    const sdk = lab.requests(`sdk-${protocol}`)[0] as RecordedRequest;
    expect(names(sdk).length).toBeGreaterThan(10);
    for (const p of lab.requests(`probed-${protocol}`)) {
      expect(new Set(names(p))).toEqual(new Set(names(sdk)));
      for (const name of names(sdk)) {
        if (name !== "authorization") expect(headerValue(p, name), name).toBe(headerValue(sdk, name));
      }
      expect(headerValue(p, "authorization")).toBe("Bearer sk-line-key");
    }
  });
});

describe("the shipped Anthropic golden samples", () => {
  // (The fingerprint samples need temperature 0 and go as a 0.x SDK: relay-fakes.test.ts.)
  it("carry no temperature, so probes are sent as the current SDK sends them (API version 2026-10-21, a bearer key)", () => {
    for (const p of lab.requests("probed-anthropic-messages")) {
      expect(JSON.parse(p.body)).not.toHaveProperty("temperature");
      expect(headerValue(p, "anthropic-version")).toBe("2026-10-21");
      expect(headerValue(p, "authorization")).toBe("Bearer sk-line-key");
    }
  });
});
