import type { HealthState } from "@linewatch/core";
import type { FC } from "hono/jsx";
import {
  type EventView,
  LENGTH_BINS,
  LENGTH_DECADES,
  type LineView,
  type LiveCell,
  type Overview,
  type RouteView,
  WINDOWS,
} from "../../services/line-views/index";
import { ago, iso, percent, remaining, scoreClass, scriptJson, share } from "./format";
import { type FormState, LineForm, SampleForm } from "./forms";

const STATE_ORDER: HealthState[] = ["cooldown", "degraded", "unprobed", "probation", "healthy", "drained", "disabled"];

export const StateBadge: FC<{ state: string }> = ({ state }) => <span class={`badge st-${state}`}>{state}</span>;

/** `bare`: no exact-time tooltip (rows × 200 lines add up; the timeline keeps it). */
const Ago: FC<{ at: number; now: number; bare?: boolean }> = ({ at, now, bare }) => (
  <time data-ago={String(at)} title={bare ? undefined : iso(at)}>
    {ago(now - at)}
  </time>
);

const Until: FC<{ at: number; now: number }> = ({ at, now }) => (
  <span class="until" data-until={String(at)}>
    {remaining(at - now)}
  </span>
);

/** Line links and form values use the name (unique, URL-safe and shorter than the id). */
const lineHref = (name: string) => `/lines/${encodeURIComponent(name)}`;

/** The header's at-a-glance line: how many lines are in each state. */
export const Summary: FC<{ o: Overview }> = ({ o }) => (
  <div id="summary" class="summary" data-swap="">
    <span class="muted">{o.lines.length} lines</span>
    {STATE_ORDER.filter((s) => o.counts[s]).map((s) => (
      <span class={`chip st-${s}`} data-state={s} title={`show only ${s} lines`}>
        {o.counts[s]} {s}
      </span>
    ))}
    {o.routes
      .filter((r) => r.mode && r.mode !== "normal")
      .map((r) => (
        <span class={`chip mode-${r.mode}`} title={`route ${r.name} runs ${r.mode}`}>
          {r.name}: {r.mode}
        </span>
      ))}
  </div>
);

const LastProbe: FC<{ l: LineView; now: number }> = ({ l, now }) => {
  if (!l.last) return <span class="muted">never</span>;
  const why = l.last.errorClass
    ? `${l.last.errorClass}${l.last.status ? ` ${l.last.status}` : ""}`
    : l.last.passed
      ? ""
      : `score ${l.last.score.toFixed(0)}`;
  return (
    <span title={`${l.last.sample}: score ${l.last.score.toFixed(1)}${l.last.passed ? " (passed)" : " (failed)"}`}>
      <span class={l.last.passed ? "dot ok" : "dot bad"} /> <Ago at={l.last.at} now={now} bare /> ago
      {why ? <small class="why"> {why}</small> : null}
    </span>
  );
};

const Timers: FC<{ l: LineView; now: number }> = ({ l, now }) => (
  <span class="timers">
    {l.cooldownUntil !== null ? (
      <span>
        <Until at={l.cooldownUntil} now={now} /> left
      </span>
    ) : null}
    {l.probation ? (
      <span title="probation stage and the share of its weight the line gets">
        stage {l.probation.stage + 1} · {percent(l.probation.factor)}
      </span>
    ) : null}
    {l.holdUntil !== null ? (
      <span class="muted" title="anti-flap hold: the weight is not raised before this">
        hold <Until at={l.holdUntil} now={now} />
      </span>
    ) : null}
    {l.fastProbeUntil !== null ? (
      <span class="muted" title="a trend alert halved the probe interval">
        fast probing
      </span>
    ) : null}
  </span>
);

const Actions: FC<{ l: LineView }> = ({ l }) =>
  l.adminState === "active" ? (
    <button type="submit" form="admin-form" name="op" value={`drained:${l.name}`} class="small">
      drain
    </button>
  ) : (
    <button type="submit" form="admin-form" name="op" value={`active:${l.name}`} class="small">
      enable
    </button>
  );

/** The score, in its line's tone: a line at weight 0 never shows in the colour of a good score (core scoreTone). */
const Score: FC<{ l: LineView }> = ({ l }) => (
  <span
    class={`score ${scoreClass(l.score, l.tone)}`}
    title={l.tone === "ok" ? undefined : `${l.state}: its probes score this, but it carries ${percent(l.weightFactor)} of its weight`}
  >
    {l.score === null ? "–" : l.score.toFixed(1)}
  </span>
);

const RouteWeights: FC<{ l: LineView }> = ({ l }) => (
  <td class="weights">
    {l.routes.length === 0 ? <span class="muted">no route</span> : null}
    {l.routes.map((r) => (
      <div title={`base ${r.baseWeight} × health ${percent(l.weightFactor)} → ${r.weight}/10000`}>
        <span class="muted">{r.route}</span> <b class={r.weight === 0 ? "zero" : undefined}>{share(r.weight)}</b>
      </div>
    ))}
  </td>
);

const LineRow: FC<{ l: LineView; i: number; now: number; canWrite: boolean }> = ({ l, i, now, canWrite }) => (
  <tr data-line={l.id} data-state={l.state} data-i={String(i)}>
    <td>
      <input type="checkbox" class="pick" aria-label={`chart ${l.name}`} />
    </td>
    <td class="name">
      <a href={lineHref(l.name)}>{l.name}</a>
      <small class="muted">
        {" "}
        {l.model} · {l.protocol}
      </small>
    </td>
    <td>
      <span class={`tier tier-${l.tier}`}>{l.tier}</span>
    </td>
    <td>
      <StateBadge state={l.state} />
      <small class="muted">
        {" "}
        <Ago at={l.since} now={now} bare />
      </small>
    </td>
    <td class="num">
      <Score l={l} />
    </td>
    <td class="num live">
      <LiveOk live={l.live} />
    </td>
    <td>
      <canvas class="spark" width="120" height="26" />
    </td>
    <RouteWeights l={l} />
    <td>
      <LastProbe l={l} now={now} />
    </td>
    <td>
      <Timers l={l} now={now} />
    </td>
    {canWrite ? (
      <td>
        <Actions l={l} />
      </td>
    ) : null}
  </tr>
);

export const LinesTable: FC<{ o: Overview; canWrite: boolean }> = ({ o, canWrite }) => (
  <div id="lines-body" class="scroll tall" data-swap="">
    {o.lines.length === 0 ? (
      <p class="empty">
        No line yet. Register one below, or start the demo with <code>npm start</code>.
      </p>
    ) : (
      <table class="lines">
        <thead>
          <tr>
            <th title="draw in the score chart">chart</th>
            <th>line</th>
            <th>tier</th>
            <th>state</th>
            <th class="num" title="mean probe score of the last 10 minutes">
              score
            </th>
            <th class="num" title="live answers the routers reported over the last 2 minutes: share ok, and how many">
              live ok
            </th>
            <th title={`mean score per ${Math.round(o.bucketMs / 60_000)} min, last ${o.hours} h`}>trend</th>
            <th title="share of each route's table; hover for base weight × health factor">weight per route</th>
            <th>last probe</th>
            <th>cooldown · probation</th>
            {canWrite ? <th title="drain: weight 0 in every route, still probed; enable: back to its routes" /> : null}
          </tr>
        </thead>
        <tbody>
          {o.lines.map((l, i) => (
            <LineRow l={l} i={i} now={o.now} canWrite={canWrite} />
          ))}
        </tbody>
      </table>
    )}
  </div>
);

const RouteTable: FC<{ r: RouteView; now: number }> = ({ r, now }) => (
  <div class="route" data-route={r.name}>
    <div class="route-head">
      <b>{r.name}</b> {r.mode ? <span class={`chip mode-${r.mode}`}>{r.mode}</span> : <span class="chip">not published</span>}
      <span class="muted">
        {r.version !== null && r.generatedAt !== null ? (
          <>
            {" "}
            v{r.version} · <Ago at={Date.parse(r.generatedAt)} now={now} /> ago ·
          </>
        ) : null}{" "}
        free cap {percent(r.freeShareCap)} · {r.onAllDown}
      </span>
    </div>
    {r.warnings.map((w) => (
      <div class="warn">{w}</div>
    ))}
    <div class="sharebar" aria-hidden="true">
      {r.members
        .filter((m) => m.weight > 0)
        .map((m) => (
          // Each protocol's weights sum to 10000 (a table per protocol): the bar shows them side by side.
          <span
            class={`seg tier-${m.tier}`}
            style={{ width: `${(m.weight / (r.members.reduce((a, x) => a + x.weight, 0) || 1)) * 100}%` }}
            title={`${m.name} (${m.protocol})`}
          />
        ))}
    </div>
    <table class="shares">
      <tbody>
        {r.members.map((m) => (
          <tr data-line={m.id} class={m.weight === 0 ? "out" : undefined}>
            <td>
              <a href={lineHref(m.name)}>{m.name}</a>
            </td>
            <td>
              <span class={`tier tier-${m.tier}`}>{m.tier}</span>
            </td>
            <td>
              <StateBadge state={m.state} />
            </td>
            <td class="num weight">{m.weight}</td>
            <td class="num share">{share(m.weight)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);

export const RouteTables: FC<{ o: Overview }> = ({ o }) => (
  <div id="tables-body" class="scroll" data-swap="">
    {o.routes.length === 0 ? <p class="empty">No route yet: create one with POST /v1/routes or the CLI.</p> : null}
    {o.routes.map((r) => (
      <RouteTable r={r} now={o.now} />
    ))}
  </div>
);

const KIND_LABEL: Record<string, string> = {
  state_change: "state",
  weight_change: "weight",
  trend_alert: "alert",
  table_published: "table",
};

const EventItem: FC<{ e: EventView; now: number }> = ({ e, now }) => (
  <li class={`ev ev-${e.kind}`} data-kind={e.kind}>
    <Ago at={e.at} now={now} />
    <span class="kind">{KIND_LABEL[e.kind] ?? e.kind}</span>
    <span class="subject">{e.lineId ? <a href={`/lines/${e.lineId}`}>{e.subject}</a> : e.subject}</span>
    <b class="change">{e.change}</b>
    <span class="reason">{e.reason}</span>
  </li>
);

export const Timeline: FC<{ events: EventView[]; now: number; id?: string }> = ({ events, now, id = "events-body" }) => (
  <div id={id} class="scroll" data-swap="">
    {events.length === 0 ? (
      <p class="empty">Nothing happened yet.</p>
    ) : (
      <ol class="events">
        {events.map((e) => (
          <EventItem e={e} now={now} />
        ))}
      </ol>
    )}
  </div>
);

/** What the client script draws: one entry per line, in the table's order. */
/** Live outcomes next to the probe score (docs/live-evidence.md); a suspect line is marked and says why on hover. */
export function LiveOk({ live }: { live: LiveCell | null }) {
  if (live === null) return <span class="muted">–</span>;
  return (
    <span class={`score ${live.suspect ? "s-bad" : live.successRate >= 0.95 ? "s-good" : "s-warn"}`} title={live.reason}>
      {percent(live.successRate)}
      <small class="muted"> of {live.requests}</small>
      {live.suspect ? <b> suspect</b> : null}
    </span>
  );
}

export function chartData(o: Overview) {
  return {
    start: o.start,
    bucketMs: o.bucketMs,
    heatMs: o.heatMs,
    now: o.now,
    lengthDecades: LENGTH_DECADES,
    lengthBins: LENGTH_BINS,
    // Scores as whole numbers and completeness in percent: what a 260-px chart can show, at half the bytes.
    lines: o.lines.map((l) => ({
      name: l.name,
      state: l.state,
      tone: l.tone,
      trend: l.trend.map((v) => (v === null ? null : Math.round(v))),
      fields: l.fields.map((v) => (v === null ? null : Math.round(v * 100))),
      len: l.lengths,
    })),
  };
}

export const ChartData: FC<{ o: Overview }> = ({ o }) => (
  <script type="application/json" id="chart-data" data-swap="" dangerouslySetInnerHTML={{ __html: scriptJson(chartData(o)) }} />
);

const WindowPicker: FC<{ hours: number }> = ({ hours }) => (
  <nav class="window" aria-label="time window">
    {WINDOWS.map((h) => (
      <a href={`/?hours=${h}`} class={h === hours ? "on" : ""}>
        {h} h
      </a>
    ))}
  </nav>
);

const LinesPanel: FC<{ o: Overview; canWrite: boolean }> = ({ o, canWrite }) => (
  <section class="panel" id="p-lines">
    <div class="panel-head">
      <h2>Lines</h2>
      <div class="tools">
        <input id="line-filter" type="search" placeholder="filter by name, tier, state, route…" aria-label="filter lines" />
        <span id="filter-count" class="muted" />
        <WindowPicker hours={o.hours} />
      </div>
    </div>
    <LinesTable o={o} canWrite={canWrite} />
  </section>
);

const TrendAndTables: FC<{ o: Overview }> = ({ o }) => (
  <div class="row">
    <section class="panel grow" id="p-trend">
      <div class="panel-head">
        <h2>Score trend</h2>
        <span class="hint">
          mean probe score per {Math.round(o.bucketMs / 60_000)} min, last {o.hours} h · tick lines in the table to compare them
        </span>
      </div>
      <div id="trend-chart" class="chart" />
      <p class="hint" id="trend-empty" hidden>
        No probe in this window yet.
      </p>
    </section>
    <section class="panel side" id="p-tables">
      <div class="panel-head">
        <h2>Route tables</h2>
        <span class="hint">weights as routers pull them</span>
      </div>
      <RouteTables o={o} />
    </section>
  </div>
);

const CompletenessAndLengths: FC<{ o: Overview }> = ({ o }) => (
  <div class="row">
    <section class="panel half" id="p-heatmap">
      <div class="panel-head">
        <h2>Field completeness</h2>
        <span class="hint">share of required fields present, per {Math.round(o.heatMs / 60_000)} min</span>
      </div>
      <div class="scroll canvas-box">
        <canvas id="heatmap" aria-label="field completeness heatmap, time by line" />
      </div>
    </section>
    <section class="panel half" id="p-lengths">
      <div class="panel-head">
        <h2>Content length</h2>
        <span class="hint">answers per length (log scale), last {o.hours} h</span>
      </div>
      <div class="scroll canvas-box">
        <canvas id="lengths" aria-label="content length distribution per line" />
      </div>
    </section>
  </div>
);

const EventsPanel: FC<{ o: Overview }> = ({ o }) => (
  <section class="panel" id="p-events">
    <div class="panel-head">
      <h2>Timeline</h2>
      <fieldset class="tools kinds" aria-label="event kinds">
        <label>
          <input type="checkbox" data-kind="state_change" checked /> state
        </label>
        <label>
          <input type="checkbox" data-kind="weight_change" checked /> weight
        </label>
        <label>
          <input type="checkbox" data-kind="trend_alert" checked /> alerts
        </label>
        <label>
          <input type="checkbox" data-kind="table_published" checked /> tables
        </label>
      </fieldset>
    </div>
    <Timeline events={o.events} now={o.now} />
  </section>
);

const SamplesTable: FC<{ samples: Overview["samples"] }> = ({ samples }) =>
  samples.length === 0 ? (
    <p class="empty">No sample: lines are not probed until one applies.</p>
  ) : (
    <table class="samples">
      <thead>
        <tr>
          <th>sample</th>
          <th>protocol</th>
          <th>routes</th>
          <th class="num">weight</th>
          <th>source</th>
        </tr>
      </thead>
      <tbody>
        {samples.map((s) => (
          <tr>
            <td>{s.name}</td>
            <td>{s.protocol}</td>
            <td>{s.routes.length ? s.routes.join(", ") : <span class="muted">every route</span>}</td>
            <td class="num">{s.weight}</td>
            <td class="muted">{s.source}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );

type OverviewProps = { o: Overview; canWrite: boolean; lineForm: FormState; sampleForm: FormState; open?: "line" | "sample" };

const ManagePanel: FC<OverviewProps> = ({ o, canWrite, lineForm, sampleForm, open }) => (
  <section class="panel" id="p-manage">
    <div class="panel-head">
      <h2>Manage</h2>
      {canWrite ? null : <span class="hint">read-only: sign in with an admin token to change lines and samples</span>}
    </div>
    {canWrite ? (
      <div class="row forms">
        <LineForm state={lineForm} routes={o.routes.map((r) => r.name)} open={open === "line"} />
        <SampleForm state={sampleForm} open={open === "sample"} />
      </div>
    ) : null}
    <h3>Samples</h3>
    <SamplesTable samples={o.samples} />
  </section>
);

export const OverviewBody: FC<OverviewProps> = (props) => (
  <>
    <LinesPanel o={props.o} canWrite={props.canWrite} />
    <TrendAndTables o={props.o} />
    <CompletenessAndLengths o={props.o} />
    <EventsPanel o={props.o} />
    <ManagePanel {...props} />
    {props.canWrite ? (
      <form id="admin-form" method="post" action="/dashboard/admin" hidden>
        <input type="hidden" name="next" value={`/?hours=${props.o.hours}`} />
      </form>
    ) : null}
    <ChartData o={props.o} />
  </>
);
