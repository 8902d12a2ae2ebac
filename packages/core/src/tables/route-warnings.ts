// Warnings shown with a route (GET /v1/routes/:name): allowed, but not what an operator wants.
import type { AdminState, Tier } from "../types";

export interface RouteWarning {
  code: "no_lines" | "all_free" | "unprobed" | "max_share_unreachable" | "free_cap_unreachable";
  message: string;
}

export interface WarningMember {
  tier: Tier;
  maxShare: number | null;
  adminState?: AdminState;
  /** A route's lines of one protocol are all its clients of that protocol get (compute-table.ts). */
  protocol?: string;
  name?: string;
  /**
   * No probe has judged the line (docs/health.md#new-lines): `no_sample`, no sample applies to it, so
   * it is never probed; `pending`, its first results have not come. Absent: judged.
   */
  unprobed?: "no_sample" | "pending";
}

/** Whether a line is unprobed, and why: from its state and how many samples apply to it. */
export function unprobedKind(state: string, applicableSamples: number): WarningMember["unprobed"] {
  if (applicableSamples === 0) return "no_sample";
  return state === "unprobed" ? "pending" : undefined;
}

const names = (ms: readonly WarningMember[]): string => ms.map((m) => m.name ?? "?").join(", ");

export function routeWarnings(members: readonly WarningMember[], opts: { freeShareCap?: number } = {}): RouteWarning[] {
  const active = members.filter((m) => (m.adminState ?? "active") === "active");
  if (active.length === 0) {
    return [{ code: "no_lines", message: "this route has no active line: its table is empty" }];
  }
  const warnings: RouteWarning[] = [];
  const cap = (m: WarningMember) => Math.min(1, Math.max(0, m.maxShare ?? 1));
  const paid = active.filter((m) => m.tier === "paid");
  if (paid.length === 0) {
    warnings.push({
      code: "all_free",
      message: "all lines of this route are free: a free line must never be the only exit; the table runs degraded",
    });
  } else {
    const protocols = [...new Set(active.map((m) => m.protocol ?? ""))];
    for (const p of protocols.length > 1 ? protocols : []) {
      if (active.some((m) => (m.protocol ?? "") === p && m.tier === "paid")) continue;
      warnings.push({
        code: "all_free",
        message: `all ${p} lines of this route are free: a free line must never be the only exit; ${p} clients get a degraded table`,
      });
    }
  }
  // Lines nobody has judged carry the probation share like any new line; one no sample applies to never leaves it.
  const noSample = active.filter((m) => m.unprobed === "no_sample");
  if (noSample.length > 0)
    warnings.push({
      code: "unprobed",
      message: `no sample applies to ${names(noSample)}: never probed, unprobed at the probation share; add a sample of its protocol for this route`,
    });
  const pending = active.filter((m) => m.unprobed === "pending");
  if (pending.length > 0)
    warnings.push({
      code: "unprobed",
      message: `${names(pending)} not judged by a probe yet: unprobed at the probation share until its first results`,
    });
  if (active.reduce((a, m) => a + cap(m), 0) < 1 - 1e-9) {
    warnings.push({
      code: "max_share_unreachable",
      message: "the maxShare of the active lines adds up to less than 1: some line will get more than its maxShare",
    });
  } else if (paid.length > 0 && opts.freeShareCap !== undefined) {
    const freeRoom = Math.min(
      opts.freeShareCap,
      active.filter((m) => m.tier === "free").reduce((a, m) => a + cap(m), 0),
    );
    if (paid.reduce((a, m) => a + cap(m), 0) + freeRoom < 1 - 1e-9) {
      warnings.push({
        code: "free_cap_unreachable",
        message: "the paid lines' maxShare plus freeShareCap add up to less than 1: a paid line will get more than its maxShare",
      });
    }
  }
  return warnings;
}
