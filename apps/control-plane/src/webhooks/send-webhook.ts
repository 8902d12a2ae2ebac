import { type BaseLookup, createGuardedLookup, guardConnect } from "@linewatch/router-client";
import { Agent, buildConnector, request } from "undici";

/** What of a receiver's answer is kept for the last error (its status and the start of its body). */
const ERROR_BODY_CHARS = 200;
const READ_BODY_BYTES = 4096;

export interface WebhookAttempt {
  ok: boolean;
  status: number | null;
  latencyMs: number;
  /** Why it failed, for the sink's last error; null when it did not. */
  error: string | null;
}

/**
 * The agent every delivery goes through: the upstream guard of lines (a name or address of a cloud
 * metadata service or a link-local one is refused before connecting; LINEWATCH_ALLOW_UPSTREAM_HOSTS
 * makes exceptions). Redirects are never followed.
 */
export function createWebhookAgent(allowed: readonly string[], lookup?: BaseLookup): Agent {
  const connector = buildConnector({ timeout: 5_000, lookup: createGuardedLookup(allowed, lookup) });
  return new Agent({ keepAliveTimeout: 10_000, connections: 4, connect: guardConnect(connector, allowed) });
}

/**
 * POST one body. The attempt is bounded by `timeoutMs` however the receiver behaves (a hung one
 * costs its slot that long, no longer); only a 2xx is a delivery.
 */
export async function sendWebhook(
  agent: Agent,
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  now: () => number,
): Promise<WebhookAttempt> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const started = now();
  try {
    const res = await request(url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "linewatch-webhooks/1", ...headers },
      body,
      dispatcher: agent,
      signal: controller.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    let text = "";
    for await (const chunk of res.body) {
      text += (chunk as Buffer).toString("utf8");
      if (text.length >= READ_BODY_BYTES) {
        res.body.destroy();
        break;
      }
    }
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    const snippet = text.replace(/\s+/g, " ").trim().slice(0, ERROR_BODY_CHARS);
    return {
      ok,
      status: res.statusCode,
      latencyMs: now() - started,
      error: ok ? null : `HTTP ${res.statusCode}${snippet ? `: ${snippet}` : ""}`,
    };
  } catch (error) {
    const message = controller.signal.aborted
      ? `no answer within ${timeoutMs} ms`
      : error instanceof Error
        ? `${error.message}${(error as { code?: string }).code ? ` (${(error as { code?: string }).code})` : ""}`
        : String(error);
    return { ok: false, status: null, latencyMs: now() - started, error: message };
  } finally {
    clearTimeout(timer);
  }
}
