// Any JSON-over-HTTP endpoint: POST the sample's request as-is to baseUrl; the answer is the
// body text, or the string at `contentPath` of the JSON body when the caller names one.
import { getPath } from "../scoring/json-path";
import { excerpt, httpErrorResult, is2xx, mergeHeaders, NO_USAGE, parseError, parseJson, protocolError } from "./http";
import type { ProtocolAdapter } from "./types";

/** Any JSON endpoint reports nothing core can rely on: no usage, finish reason or id. */
const UNKNOWN = { tokens: null, usage: NO_USAGE, finishReason: null, id: null } as const;

export const genericHttpAdapter: ProtocolAdapter = {
  protocol: "generic-http",

  buildProbe(target, filledRequest) {
    return {
      url: target.baseUrl,
      method: "POST",
      headers: mergeHeaders(
        { "content-type": "application/json", accept: "application/json, text/plain;q=0.9, */*;q=0.8" },
        target.apiKey === null ? {} : { authorization: `Bearer ${target.apiKey}` },
        target.headers,
      ),
      body: JSON.stringify(filledRequest),
    };
  },

  parseResponse(status, bodyText, opts) {
    if (!is2xx(status)) return httpErrorResult(status, bodyText);
    const parsed = parseJson(bodyText);
    if (opts?.contentPath === undefined) {
      return { ok: true, content: bodyText, json: parsed.ok ? parsed.value : null, ...UNKNOWN };
    }
    if (!parsed.ok) return parseError(`body is not JSON (${excerpt(bodyText, 80)})`, parsed.message);
    const content = getPath(parsed.value, opts.contentPath);
    if (typeof content !== "string") return protocolError(`no text at ${opts.contentPath} in the body`);
    return { ok: true, content, json: parsed.value, ...UNKNOWN };
  },
};
