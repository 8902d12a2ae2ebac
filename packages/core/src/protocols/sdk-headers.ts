// What the official SDKs send with a request besides its body, so a probe looks like any client's
// request (docs/scoring.md#what-a-relay-can-fake: probes carry nothing that marks them). Taken from
// the pinned SDKs (`openai`, `@anthropic-ai/sdk`); test/apps/control-plane/probe-headers.test.ts runs
// both SDKs against a recording upstream and fails when a probe's headers drift from theirs.
//
// Left out on purpose: `accept-encoding` (the router sends none either, so that it can check answers
// in-band; a probe that asked for gzip would differ from routed traffic) and what the HTTP client adds
// itself (`host`, `connection`, `content-length`).

/** How an SDK describes the machine it runs on (`x-stainless-os`, `-arch`, `-runtime`, `-runtime-version`). */
export interface ClientPlatform {
  os: string;
  arch: string;
  runtime: string;
  runtimeVersion: string;
}

/** Used when the shell does not say: Node 20 on Linux x64, as the SDKs name them. */
export const DEFAULT_CLIENT_PLATFORM: ClientPlatform = Object.freeze({
  os: "Linux",
  arch: "x64",
  runtime: "node",
  runtimeVersion: "v20.20.2",
});

/** The `openai` package the probes pass for. */
export const OPENAI_SDK_VERSION = "6.30.1";

/**
 * The `@anthropic-ai/sdk` releases the probes pass for. 1.x sends API version 2026-10-21 and the key as
 * `Authorization: Bearer`; 0.x sent 2023-06-01 and `x-api-key`. 2026-10-21 refuses `temperature`,
 * `top_p` and `top_k`, so a sample that sets one is sent the way a 0.x client would send it.
 */
export const ANTHROPIC_SDK = Object.freeze({
  current: Object.freeze({ packageVersion: "1.17.0", apiVersion: "2026-10-21", credential: "authorization" as const }),
  legacy: Object.freeze({ packageVersion: "0.137.0", apiVersion: "2023-06-01", credential: "x-api-key" as const }),
});

/** The Anthropic API version a probe sends by default (the current SDK's). */
export const ANTHROPIC_VERSION = ANTHROPIC_SDK.current.apiVersion;

/** Request fields API version 2026-10-21 refuses. */
const LEGACY_SAMPLING_FIELDS = ["temperature", "top_p", "top_k"] as const;

function stainless(packageVersion: string, platform: ClientPlatform, timeoutSec: number | null): Record<string, string> {
  const h: Record<string, string> = { "x-stainless-retry-count": "0" };
  if (timeoutSec !== null) h["x-stainless-timeout"] = String(timeoutSec);
  h["x-stainless-lang"] = "js";
  h["x-stainless-package-version"] = packageVersion;
  h["x-stainless-os"] = platform.os;
  h["x-stainless-arch"] = platform.arch;
  h["x-stainless-runtime"] = platform.runtime;
  h["x-stainless-runtime-version"] = platform.runtimeVersion;
  return h;
}

/** What Node's fetch adds to every SDK request (after the SDK's own headers). */
const FETCH_HEADERS = { "accept-language": "*", "sec-fetch-mode": "cors" } as const;

/** `openai` (chat completions and Responses alike), in the order it sends them. */
export function openAiSdkHeaders(apiKey: string | null, platform: ClientPlatform = DEFAULT_CLIENT_PLATFORM): Record<string, string> {
  return {
    accept: "application/json",
    "user-agent": `OpenAI/JS ${OPENAI_SDK_VERSION}`,
    ...stainless(OPENAI_SDK_VERSION, platform, null),
    ...(apiKey === null ? {} : { authorization: `Bearer ${apiKey}` }),
    "content-type": "application/json",
    ...FETCH_HEADERS,
  };
}

/**
 * The Anthropic SDK release a probe passes for (see ANTHROPIC_SDK): the 0.x one for a body with a
 * sampling field, or for a line whose own headers pin an API version older than the current SDK's
 * (its clients are old ones: a relay that takes only `x-api-key` keeps being probed that way).
 */
export function anthropicSdkFor(body: Record<string, unknown>, pinnedVersion?: string): (typeof ANTHROPIC_SDK)["current" | "legacy"] {
  if (pinnedVersion !== undefined && pinnedVersion < ANTHROPIC_SDK.current.apiVersion) return ANTHROPIC_SDK.legacy;
  return LEGACY_SAMPLING_FIELDS.some((f) => body[f] !== undefined) ? ANTHROPIC_SDK.legacy : ANTHROPIC_SDK.current;
}

/** `@anthropic-ai/sdk` `messages.create`, in the order it sends them. */
export function anthropicSdkHeaders(
  apiKey: string | null,
  body: Record<string, unknown>,
  platform: ClientPlatform = DEFAULT_CLIENT_PLATFORM,
  pinnedVersion?: string,
): Record<string, string> {
  const sdk = anthropicSdkFor(body, pinnedVersion);
  const credential: Record<string, string> = {};
  if (apiKey !== null) credential[sdk.credential] = sdk.credential === "authorization" ? `Bearer ${apiKey}` : apiKey;
  return {
    accept: "application/json",
    "user-agent": `Anthropic/JS ${sdk.packageVersion}`,
    // The SDK's default timeout, 10 minutes, in seconds.
    ...stainless(sdk.packageVersion, platform, 600),
    "anthropic-version": sdk.apiVersion,
    ...credential,
    "content-type": "application/json",
    ...FETCH_HEADERS,
  };
}
