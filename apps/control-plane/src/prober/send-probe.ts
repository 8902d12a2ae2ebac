import type { ErrorClass, ProbeHttpRequest } from "@linewatch/core";
import { type BaseLookup, createGuardedLookup, guardConnect } from "@linewatch/router-client";
import { Agent, buildConnector, request, errors as undiciErrors } from "undici";

/** Bytes of an answer we read at most: a probe needs the answer, not a runaway stream. */
export const MAX_PROBE_BODY_BYTES = 1024 * 1024;

export interface HttpOutcome {
  status: number | null;
  bodyText: string;
  latencyMs: number;
  errorClass: ErrorClass | null;
  errorMessage?: string;
}

/**
 * One keep-alive agent for every probe; redirects are never followed (a 3xx is a failed probe).
 * Every connection goes through the upstream guard: a name that resolves to a metadata or
 * link-local address, or such a literal address (IPv6 forms that carry one included), is refused
 * before connecting. `lookup` is the resolver under the guard (tests pass their own).
 */
export function createProbeAgent(allowed: readonly string[], lookup?: BaseLookup): Agent {
  const connector = buildConnector({ timeout: 5_000, lookup: createGuardedLookup(allowed, lookup) });
  return new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 30_000, connections: 32, connect: guardConnect(connector, allowed) });
}

function classify(error: unknown, timedOut: boolean): { errorClass: ErrorClass; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  if (timedOut || error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) {
    return { errorClass: "timeout", message: "no complete answer within the timeout" };
  }
  return { errorClass: "connect", message };
}

/**
 * Send one probe with undici, bounded by `timeoutMs` through an AbortController: a hung upstream
 * costs its slot for at most that long. `now` is the caller's clock, for the latency.
 */
export async function sendProbe(agent: Agent, req: ProbeHttpRequest, timeoutMs: number, now: () => number): Promise<HttpOutcome> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const started = now();
  try {
    const res = await request(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      dispatcher: agent,
      signal: controller.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > MAX_PROBE_BODY_BYTES) {
        chunks.push(buf.subarray(0, buf.length - (size - MAX_PROBE_BODY_BYTES)));
        res.body.destroy();
        break;
      }
      chunks.push(buf);
    }
    return { status: res.statusCode, bodyText: Buffer.concat(chunks).toString("utf8"), latencyMs: now() - started, errorClass: null };
  } catch (error) {
    const { errorClass, message } = classify(error, timedOut);
    return { status: null, bodyText: "", latencyMs: now() - started, errorClass, errorMessage: message };
  } finally {
    clearTimeout(timer);
  }
}
