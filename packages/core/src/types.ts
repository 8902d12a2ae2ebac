// Domain types shared by every part of linewatch (docs/README.md#words, docs/scoring.md). Plain data, JSON-serialisable.
import type { FingerprintExpect } from "./fingerprint/normalize";
import type { ProbeCheck } from "./scoring/checks";

export const TIERS = ["paid", "free"] as const;
export type Tier = (typeof TIERS)[number];

export const PROTOCOLS = ["openai-chat", "openai-responses", "anthropic-messages", "generic-http"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export const ADMIN_STATES = ["active", "drained", "disabled"] as const;
export type AdminState = (typeof ADMIN_STATES)[number];

export const ON_ALL_DOWN = ["fail-open", "fail-closed"] as const;
export type OnAllDown = (typeof ON_ALL_DOWN)[number];

/** A line's membership of a route, with its base weight. */
export interface RouteMembership {
  route: string;
  weight: number;
}

export interface Line {
  id: string;
  name: string;
  tier: Tier;
  protocol: Protocol;
  baseUrl: string;
  model: string;
  headers: Record<string, string>;
  routes: RouteMembership[];
  probeIntervalSec: number;
  timeoutMs: number | null;
  dailyQuota: number | null;
  probeBudgetPct: number;
  maxShare: number | null;
  adminState: AdminState;
  hasApiKey: boolean;
  createdAt: string;
}

export interface Route {
  name: string;
  freeShareCap: number;
  onAllDown: OnAllDown;
  createdAt: string;
}

/** What a good answer to a sample looks like (docs/scoring.md). */
export interface SampleExpect {
  minLength?: number;
  maxLength?: number;
  requiredFields?: string[];
  contains?: string[];
  matches?: string;
  answer?: string;
  nonce?: boolean;
  varies?: boolean;
  maxLatencyMs?: number;
  /** A fingerprint sample: its short answers are anchored and compared (docs/scoring.md#what-a-relay-can-fake). */
  fingerprint?: FingerprintExpect;
}

export interface Sample {
  id: string;
  name: string;
  protocol: Protocol;
  /** Empty: every route of the sample's protocol. */
  routes: string[];
  /** Protocol body without `model`; strings may hold {{nonce}} and {{now}}. */
  request: Record<string, unknown>;
  expect: SampleExpect;
  /** Other phrasings of the request's prompt, rotated from probe to probe (fingerprint/variants.ts). */
  variants?: string[];
  timeoutMs: number | null;
  weight: number;
  createdAt: string;
}

/** The five score components of docs/scoring.md, each in [0, 1]. */
export interface ScoreComponents {
  length: number;
  fields: number;
  freshness: number;
  status: number;
  latency: number;
}

export const ERROR_CLASSES = ["timeout", "connect", "http_status", "parse", "protocol"] as const;
/** Why a probe failed hard; null when the upstream answered 2xx with a parseable body. */
export type ErrorClass = (typeof ERROR_CLASSES)[number];

export interface ProbeResult {
  id: string;
  lineId: string;
  sampleId: string;
  /** ms since epoch */
  startedAt: number;
  latencyMs: number;
  status: number | null;
  errorClass: ErrorClass | null;
  hardFailure: boolean;
  passed: boolean;
  score: number;
  components: ScoreComponents;
  /** Each expectation's verdict (scoring/checks.ts); empty for a hard failure. */
  checks: ProbeCheck[];
  contentLength: number;
  contentHash: string | null;
  /** The first few hundred characters of the answer, so a human can see why. */
  excerpt: string;
  /** Why components are below 1, in words. */
  reasons: string[];
  tokens: number | null;
}

/** Expected outcomes in core are values, not exceptions. */
export type Result<T, E = string> = { ok: true; value: T } | { ok: false; error: E };
export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const err = <E>(error: E): Result<never, E> => ({ ok: false, error });
