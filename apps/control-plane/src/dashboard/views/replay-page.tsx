// The replay view (docs/replay.md): a range and a policy in a form; what the policy would have done next
// to what did: one line's weight over time (actual and proposed, an inline SVG step chart), the
// per-route summary and the bad episodes.
import type { ReplayReport, TimelinePoint } from "@linewatch/core";
import type { FC } from "hono/jsx";

export interface ReplayForm {
  since: string;
  from: string;
  to: string;
  line: string;
  policy: string;
}

const W = 720;
const H = 140;
const PAD = 28;

/** A step path of the factor (0–1) over [from, to]. */
function stepPath(points: readonly TimelinePoint[], from: number, to: number): string {
  const x = (t: number) => PAD + ((Math.min(to, Math.max(from, t)) - from) / Math.max(1, to - from)) * (W - 2 * PAD);
  const y = (f: number) => H - PAD - f * (H - 2 * PAD);
  let d = "";
  let last: number | null = null;
  for (const p of points) {
    const t = Date.parse(p.at);
    if (last === null) d += `M${x(t).toFixed(1)},${y(p.factor).toFixed(1)}`;
    else d += `H${x(t).toFixed(1)}V${y(p.factor).toFixed(1)}`;
    last = p.factor;
  }
  return last === null ? "" : `${d}H${x(to).toFixed(1)}`;
}

const WeightChart: FC<{ t: ReplayReport["timelines"][number]; from: number; to: number }> = ({ t, from, to }) => (
  <svg class="replay-chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`weight factor of ${t.line}, actual and proposed`}>
    <line x1={PAD} x2={W - PAD} y1={H - PAD} y2={H - PAD} stroke="currentColor" stroke-opacity="0.3" />
    <line x1={PAD} x2={W - PAD} y1={PAD} y2={PAD} stroke="currentColor" stroke-opacity="0.15" />
    <text x={4} y={PAD + 4} font-size="10" fill="currentColor">
      1
    </text>
    <text x={4} y={H - PAD + 4} font-size="10" fill="currentColor">
      0
    </text>
    <text x={PAD} y={H - 8} font-size="10" fill="currentColor">
      {new Date(from).toISOString().slice(0, 16).replace("T", " ")}
    </text>
    <text x={W - PAD} y={H - 8} font-size="10" fill="currentColor" text-anchor="end">
      {new Date(to).toISOString().slice(0, 16).replace("T", " ")}
    </text>
    <path d={stepPath(t.actual, from, to)} fill="none" stroke="#888" stroke-width="3" class="actual" />
    <path d={stepPath(t.proposed, from, to)} fill="none" stroke="#2a6fdb" stroke-width="1.5" class="proposed" />
  </svg>
);

const pct = (s: number) => `${(s * 100).toFixed(1)}%`;
const both = (a: string | number, b: string | number) => (String(a) === String(b) ? String(a) : `${a} → ${b}`);
const time = (iso: string | null) => (iso === null ? "-" : iso.slice(0, 19).replace("T", " "));

export const ReplayBody: FC<{ form: ReplayForm; lines: string[]; report: ReplayReport | null; error: string | null }> = ({
  form,
  lines,
  report,
  error,
}) => (
  <>
    <section class="panel" id="p-replay-form">
      <div class="panel-head">
        <h2>Policy replay</h2>
        <span class="hint">what a policy would have done over the recorded probe results; nothing is written</span>
      </div>
      <form method="get" action="/replay" class="replay-form">
        <label>
          since <input name="since" value={form.since} placeholder="24h" size={6} />
        </label>
        <label>
          or from <input name="from" value={form.from} placeholder="2026-11-29T00:00:00Z" size={22} />
        </label>
        <label>
          to <input name="to" value={form.to} placeholder="now" size={22} />
        </label>
        <label>
          line{" "}
          <select name="line">
            {lines.map((name) => (
              <option value={name} selected={name === form.line}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label class="block">
          policy (YAML or JSON: a route's policy fields, weights, passScore; empty: the current policy)
          <textarea name="policy" rows={4} cols={60} placeholder="failCount: 3&#10;cooldownBaseMs: 600000">
            {form.policy}
          </textarea>
        </label>
        <button type="submit">replay</button>
      </form>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </section>
    {report ? <ReplayResult report={report} /> : null}
  </>
);

const ReplayResult: FC<{ report: ReplayReport }> = ({ report }) => {
  const from = Date.parse(report.range.from);
  const to = Date.parse(report.range.to);
  return (
    <>
      {report.timelines.map((t) => (
        <section class="panel" id="p-replay-line">
          <div class="panel-head">
            <h2>{t.line}: weight factor, actual (grey) and proposed (blue)</h2>
            <span class="hint">{report.results} probe results replayed</span>
          </div>
          <WeightChart t={t} from={from} to={to} />
        </section>
      ))}
      <section class="panel" id="p-replay-routes">
        <div class="panel-head">
          <h2>Routes (actual → proposed)</h2>
        </div>
        <table>
          <thead>
            <tr>
              <th>route</th>
              <th>versions</th>
              <th>per hour</th>
              <th>worst hour</th>
              <th>degraded min</th>
              <th>panic min</th>
              <th>shares</th>
            </tr>
          </thead>
          <tbody>
            {report.routes.map((r) => (
              <tr>
                <td>{r.name}</td>
                <td>{both(r.actual.versions, r.proposed.versions)}</td>
                <td>{both(r.actual.versionsPerHour.mean, r.proposed.versionsPerHour.mean)}</td>
                <td>{both(r.actual.versionsPerHour.worst?.versions ?? 0, r.proposed.versionsPerHour.worst?.versions ?? 0)}</td>
                <td>{both(r.actual.degradedMinutes, r.proposed.degradedMinutes)}</td>
                <td>{both(r.actual.panicMinutes, r.proposed.panicMinutes)}</td>
                <td>
                  {Object.keys(r.proposed.shares)
                    .map((name) => `${name} ${both(pct(r.actual.shares[name] ?? 0), pct(r.proposed.shares[name] ?? 0))}`)
                    .join(" · ")}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section class="panel" id="p-replay-episodes">
        <div class="panel-head">
          <h2>Bad episodes</h2>
          <span class="hint">
            share-minutes carried: {report.badEpisodeShare.actualShareMinutes} → {report.badEpisodeShare.proposedShareMinutes}
          </span>
        </div>
        {report.episodes.length === 0 ? (
          <p class="empty">no bad episodes in the range</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>line</th>
                <th>bad from</th>
                <th>to</th>
                <th>failed</th>
                <th>down (actual)</th>
                <th>down (proposed)</th>
                <th>change</th>
              </tr>
            </thead>
            <tbody>
              {report.episodes.map((e) => (
                <tr>
                  <td>{e.line}</td>
                  <td>{time(e.from)}</td>
                  <td>{time(e.to)}</td>
                  <td>{e.failedProbes}</td>
                  <td>{time(e.actual.downAt)}</td>
                  <td>{time(e.proposed.downAt)}</td>
                  <td>{e.bySeconds === null || e.change === "same" ? e.change : `${e.change} (${Math.abs(e.bySeconds)} s)`}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section class="panel">
        {report.notes.map((n) => (
          <p class="hint">{n}</p>
        ))}
      </section>
    </>
  );
};
