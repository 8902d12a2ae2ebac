// Status: 2xx and parseable. Anything else is a hard failure, which scores 0 outright.
import type { ComponentScore, ProbeObservation } from "./score-probe";

/** A timeout, connect error, non-2xx or unreadable body: no answer to score. */
export function isHardFailure(observation: ProbeObservation): boolean {
  const { status, errorClass } = observation;
  return errorClass !== null || status === null || !(status >= 200 && status < 300);
}

export function hardFailureReason(observation: ProbeObservation): string {
  const { errorClass, status, latencyMs } = observation;
  const base =
    errorClass === "timeout"
      ? `timed out after ${Math.round(latencyMs)} ms`
      : errorClass === "connect"
        ? "connect error"
        : errorClass === "parse"
          ? "unparseable response body"
          : errorClass === "protocol"
            ? "response is not a valid answer"
            : status === null
              ? "no response"
              : `HTTP ${status}`;
  const detail = observation.errorMessage;
  return detail ? `${base}: ${detail}` : base;
}

/** Only called without a hard failure: a 2xx whose answer the adapter found. */
export function scoreStatus(observation: ProbeObservation): ComponentScore {
  return observation.content === null ? { score: 0, reasons: ["2xx response without an answer"] } : { score: 1, reasons: [] };
}
