import {
  ADMIN_STATES,
  type AdminState,
  DEFAULT_HEALTH_POLICY,
  failingReferences,
  HEALTH_STATES,
  isFastProbing,
  lineStatus,
} from "@linewatch/core";
import type { ScrapeState } from "./scrape-state";
import type { FromState } from "./state-series";

const isAdminState = (s: string): s is AdminState => (ADMIN_STATES as readonly string[]).includes(s);

const healthById = (state: ScrapeState) => new Map(state.health.map((h) => [h.lineId, h]));

/**
 * The lines' series, read at scrape time: registered, state, score, weight factor, trend alerts.
 * `now` dates the status of a line never probed.
 */
export function lineSeries(now: () => number): FromState[] {
  /**
   * A line's status as its tables see it, from core's one function (the admin state over health). Its
   * state and factor do not depend on the policy; the defaults stand in for the route's overrides.
   */
  const statusOf = (line: ScrapeState["lines"][number], h: ScrapeState["health"][number] | undefined) =>
    lineStatus(isAdminState(line.adminState) ? line.adminState : "active", h?.health ?? null, DEFAULT_HEALTH_POLICY, now());
  return [
    {
      name: "linewatch_line_info",
      help: "1 for every registered line, with its tier and protocol (join on line).",
      labelNames: ["line", "tier", "protocol"],
      fill: (state, set) => {
        for (const l of state.lines) set({ line: l.name, tier: l.tier, protocol: l.protocol }, 1);
      },
    },
    {
      name: "linewatch_line_state",
      help: `1 for the state each line is in, 0 for the others (${HEALTH_STATES.join(", ")}).`,
      labelNames: ["line", "state"],
      fill: (state, set) => {
        const health = healthById(state);
        for (const l of state.lines) {
          const current = statusOf(l, health.get(l.id)).state;
          for (const s of HEALTH_STATES) set({ line: l.name, state: s }, s === current ? 1 : 0);
        }
      },
    },
    {
      name: "linewatch_line_score",
      help: "Line score 0-100: the mean of the line's last 10 minutes of probe scores, as of its latest probe (absent before the first).",
      labelNames: ["line"],
      fill: (state, set) => {
        const health = healthById(state);
        for (const l of state.lines) {
          const s = health.get(l.id)?.score;
          if (s !== null && s !== undefined) set({ line: l.name }, s);
        }
      },
    },
    {
      name: "linewatch_line_weight_factor_ratio",
      help: "Health factor 0-1 applied to the line's base weight in every route (graded when degraded, 0.2/0.5 in probation, 0 in cooldown, drained or disabled).",
      labelNames: ["line"],
      fill: (state, set) => {
        const health = healthById(state);
        for (const l of state.lines) {
          set({ line: l.name }, statusOf(l, health.get(l.id)).factor);
        }
      },
    },
    ...trendSeries(now),
    ...relaySeries(),
  ];
}

/** What a relay can fake (docs/scoring.md#what-a-relay-can-fake): fingerprint samples whose answers moved, failing usage checks. */
function relaySeries(): FromState[] {
  return [
    {
      name: "linewatch_line_fingerprint_moved",
      help: "Fingerprint samples of a line whose answers left its own anchors or its paid peers' (the sequential statistic at its threshold): another model may be answering under this line's name.",
      labelNames: ["line"],
      fill: (state, set) => {
        const health = healthById(state);
        for (const l of state.lines) {
          const tracks = Object.values(health.get(l.id)?.health?.fingerprints ?? {});
          set({ line: l.name }, tracks.filter((t) => failingReferences(t).length > 0).length);
        }
      },
    },
    {
      name: "linewatch_line_usage_failing",
      help: "Samples of a line whose latest judged usage check failed: the line reports more tokens than the same prompt costs on its own anchor or its paid peers.",
      labelNames: ["line"],
      fill: (state, set) => {
        const health = healthById(state);
        for (const l of state.lines) {
          const tracks = Object.values(health.get(l.id)?.health?.usage ?? {});
          set({ line: l.name }, tracks.filter((t) => t.failing !== undefined).length);
        }
      },
    },
  ];
}

/** A line's trend alerts: whether one is open now (fast probing), and how many the timeline holds. */
function trendSeries(now: () => number): FromState[] {
  return [
    {
      name: "linewatch_line_trend_alert_active",
      help: "1 while a line probes at the fast interval after a trend alert (its score fell more than 20 points within 10 minutes).",
      labelNames: ["line"],
      fill: (state, set) => {
        const at = now();
        const health = healthById(state);
        for (const l of state.lines) {
          const h = health.get(l.id)?.health;
          set({ line: l.name }, h && isFastProbing(h, at) ? 1 : 0);
        }
      },
    },
    {
      name: "linewatch_trend_alerts_total",
      help: "Trend alerts recorded for each line (score drop of more than 20 points within 10 minutes), as the event timeline holds them.",
      labelNames: ["line"],
      type: "counter",
      fill: (state, set) => {
        const counts = new Map(state.trendAlerts.map((t) => [t.lineId, t.count]));
        for (const [id, name] of new Map(state.lines.map((l) => [l.id, l.name]))) set({ line: name }, counts.get(id) ?? 0);
      },
    },
  ];
}
