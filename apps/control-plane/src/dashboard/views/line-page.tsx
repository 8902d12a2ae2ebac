import type { LineHealth } from "@linewatch/contract";
import type { Child, FC } from "hono/jsx";
import { type LinePage, WINDOWS, type WindowHours } from "../../services/line-views/index";
import { ago, iso, percent, remaining, scoreClass, scriptJson, share } from "./format";
import { StateBadge, Timeline } from "./overview";

const COMPONENTS = [
  ["length", "length", "vs minLength and the line's own median"],
  ["fields", "fields", "required fields present"],
  ["freshness", "fresh", "nonce echoed, not a stale cache, right answer"],
  ["status", "status", "2xx and parseable"],
  ["latency", "latency", "vs maxLatencyMs and the line's p90"],
] as const;

const compClass = (v: number) => (v >= 0.8 ? "s-good" : v >= 0.5 ? "s-warn" : "s-bad");

const Ago: FC<{ at: number; now: number }> = ({ at, now }) => (
  <time datetime={iso(at)} data-ago={String(at)} title={iso(at)}>
    {ago(now - at)}
  </time>
);

const Kv: FC<{ k: string; children?: Child; title?: string }> = ({ k, children, title }) => (
  <div class="kv" title={title}>
    <span class="k">{k}</span>
    <span class="v">{children}</span>
  </div>
);

const AdminButtons: FC<{ p: LinePage }> = ({ p }) => (
  <form method="post" action="/dashboard/admin" class="inline actions">
    <input type="hidden" name="next" value={`/lines/${p.line.id}`} />
    {p.line.adminState !== "drained" ? (
      <button type="submit" name="op" value={`drained:${p.line.id}`} title="weight 0 in every route; probes continue">
        drain
      </button>
    ) : null}
    {p.line.adminState !== "disabled" ? (
      <button type="submit" name="op" value={`disabled:${p.line.id}`} title="weight 0 and no more probes">
        disable
      </button>
    ) : null}
    {p.line.adminState !== "active" ? (
      <button type="submit" name="op" value={`active:${p.line.id}`} class="primary">
        enable
      </button>
    ) : null}
    <button type="submit" formaction={`/dashboard/lines/${p.line.id}/probe`} title="probe now with every sample that applies">
      probe now
    </button>
  </form>
);

const LineHead: FC<{ p: LinePage; canWrite: boolean; now: number }> = ({ p, canWrite, now }) => (
  <section class="line-head">
    <div>
      <h1>
        {p.line.name} <StateBadge state={p.health.state} />
        <span class={`tier tier-${p.line.tier}`}>{p.line.tier}</span>
      </h1>
      <div class="muted">
        {p.line.protocol} · {p.line.model} · {p.line.baseUrl} · since <Ago at={Date.parse(p.health.since)} now={now} />
        {p.health.state !== p.health.serviceState ? ` · probes say ${p.health.serviceState}` : ""}
      </div>
    </div>
    {canWrite ? <AdminButtons p={p} /> : null}
  </section>
);

const LiveCard: FC<{ live: LineHealth["live"] }> = ({ live }) => (
  <section class="panel card" id="live-card">
    <h2>Live traffic</h2>
    {live.recent.successRate === null ? (
      <div class="muted">no live answers reported in the last 2 min</div>
    ) : (
      <>
        <div class={`big ${live.suspect ? "s-bad" : live.recent.successRate >= 0.95 ? "s-good" : "s-warn"}`}>
          {percent(live.recent.successRate)}
        </div>
        <div class="muted">
          ok of {live.recent.requests} live answers · last 2 min · {live.recent.routers.length} router(s) · baseline failures{" "}
          {percent(live.baseline.failureRate)}
        </div>
        <div class="muted">
          {Object.entries(live.recent.counts)
            .filter(([, n]) => n > 0)
            .map(([o, n]) => `${n} ${o}`)
            .join(" · ")}
        </div>
        {live.suspect ? <div class="s-bad">{live.reason}</div> : null}
      </>
    )}
  </section>
);

const ScoreCard: FC<{ h: LineHealth }> = ({ h }) => {
  const components = h.components; // a const: its null check holds inside the callbacks below
  return (
    <section class="panel card">
      <h2>Score</h2>
      <div class={`big ${scoreClass(h.score, h.tone)}`}>{h.score === null ? "–" : h.score.toFixed(1)}</div>
      <div class="muted">mean of the last 10 min · weight factor {percent(h.weightFactor)}</div>
      {components ? (
        <div class="comps">
          {COMPONENTS.map(([key, label, title]) => (
            <div class="comp" title={title}>
              <span class="k">{label}</span>
              <span class="bar">
                <i class={compClass(components[key])} style={{ width: `${Math.round(components[key] * 100)}%` }} />
              </span>
              <span class="v">{components[key].toFixed(2)}</span>
            </div>
          ))}
        </div>
      ) : null}
    </section>
  );
};

/** A time still to come, counting down in the browser. */
const Left: FC<{ until: number; now: number }> = ({ until, now }) => (
  <span class="until" data-until={String(until)}>
    {remaining(until - now)}
  </span>
);

const HealthCard: FC<{ h: LineHealth; now: number }> = ({ h, now }) => (
  <section class="panel card">
    <h2>Health</h2>
    {h.cooldown ? (
      <Kv k="cooldown">
        <Left until={Date.parse(h.cooldown.until)} now={now} /> left of {remaining(h.cooldown.durationMs)}
      </Kv>
    ) : null}
    {h.probation ? (
      <Kv k="probation">
        stage {h.probation.stage + 1} · {percent(h.probation.factor)} of its weight
      </Kv>
    ) : null}
    {h.holdUntil && Date.parse(h.holdUntil) > now ? (
      <Kv k="anti-flap hold" title="the weight is not raised before this">
        <Left until={Date.parse(h.holdUntil)} now={now} />
      </Kv>
    ) : null}
    {h.fastProbeUntil && Date.parse(h.fastProbeUntil) > now ? <Kv k="fast probing">after a trend alert</Kv> : null}
    <Kv k="failed in a row">{h.consecutiveFailures}</Kv>
    <Kv k="passed in a row">{h.consecutivePasses}</Kv>
    {h.routes.map((r) => (
      <Kv k={`route ${r.route}`} title={`base weight ${r.baseWeight}; table v${r.tableVersion ?? "–"}`}>
        <b class={r.weight === 0 ? "zero" : ""}>{share(r.weight)}</b> <span class="muted">(base {r.baseWeight})</span>
      </Kv>
    ))}
  </section>
);

const ProbingCard: FC<{ p: LinePage }> = ({ p }) => {
  const { probing } = p.health;
  return (
    <section class="panel card">
      <h2>Probing</h2>
      <Kv k="samples">{probing.samples.length ? probing.samples.join(", ") : "none applies"}</Kv>
      <Kv k="interval">{probing.intervalSec} s</Kv>
      <Kv k="probes a day">{probing.probesPerDay}</Kv>
      <Kv k="last 24 h">
        {probing.last24h.probes} probes · {probing.last24h.tokens} tokens
      </Kv>
      <Kv k="timeout">{p.line.timeoutMs === null ? "the sample's" : `${p.line.timeoutMs} ms`}</Kv>
      <Kv k="quota">{p.line.dailyQuota === null ? "none" : `${p.line.dailyQuota}/day, ${p.line.probeBudgetPct}% for probes`}</Kv>
      <Kv k="API key">{p.line.hasApiKey ? "set (encrypted)" : "none"}</Kv>
      {p.headerNames.length ? <Kv k="headers">{p.headerNames.join(", ")}</Kv> : null}
    </section>
  );
};

type Relay = LineHealth["relay"];

/** What a relay can fake (docs/scoring.md#what-a-relay-can-fake): fingerprint, usage and shape verdicts, billing evidence. */
const RelayCard: FC<{ relay: Relay; now: number }> = ({ relay, now }) => {
  const moved = relay.fingerprints.filter((f) => f.failing.length > 0);
  const usage = relay.usage.filter((u) => u.failing !== null);
  const b = relay.billing;
  return (
    <section class="panel card" id="relay-card">
      <h2>What a relay can fake</h2>
      <Kv k="fingerprint" title="Short answers at temperature 0 against the line's own anchors and its paid peers'">
        {relay.fingerprints.length === 0 ? (
          <span class="muted">no fingerprint sample</span>
        ) : moved.length === 0 ? (
          <span class="s-good" data-verdict="fingerprint-ok">
            as anchored ({relay.fingerprints.length} samples)
          </span>
        ) : (
          <span class="s-bad" data-verdict="fingerprint-moved">
            moved: {moved.map((f) => `${f.sample} (${f.failing.join(", ")})`).join(", ")}
          </span>
        )}
      </Kv>
      <Kv k="usage" title="Prompt and completion tokens claimed against the line's own anchor and its paid peers'">
        {relay.usage.length === 0 ? (
          <span class="muted">no usage reported</span>
        ) : usage.length === 0 ? (
          <span class="s-good" data-verdict="usage-ok">
            as expected ({relay.usage.length} samples)
          </span>
        ) : (
          <span class="s-bad" data-verdict="usage-failing" title={usage.map((u) => `${u.sample}: ${u.failing}`).join("\n")}>
            inflated: {usage.map((u) => u.sample).join(", ")}
          </span>
        )}
      </Kv>
      <Kv k="billed, 24 h" title="Tokens claimed / tokens expected, summed over the probes that had a reference">
        {b.probes === 0 ? (
          <span class="muted">no usage reported</span>
        ) : (
          <span class={b.inflation !== null && b.inflation > 1.1 ? "s-bad" : ""} data-billing={String(b.inflation ?? "")}>
            {b.claimedInput + b.claimedOutput} of {b.expectedInput + b.expectedOutput} expected tokens
            {b.inflation === null ? "" : ` (${percent(b.inflation)})`} · {b.usageFailures} usage failure(s)
          </span>
        )}
      </Kv>
      <Kv k="shape" title={relay.shape?.usual ?? ""}>
        {relay.shape === null ? (
          <span class="muted">no answer yet</span>
        ) : relay.shape.changedAt ? (
          <span class={relay.shape.recentlyChanged ? "s-warn" : ""} data-verdict="shape-changed">
            changed <Ago at={Date.parse(relay.shape.changedAt)} now={now} />
          </span>
        ) : (
          <span class="s-good">as usual ({relay.shape.answers} answers)</span>
        )}
      </Kv>
    </section>
  );
};

/** Per fingerprint sample and phrasing: the anchored answers against the latest. */
const FingerprintPanel: FC<{ relay: Relay }> = ({ relay }) =>
  relay.fingerprints.length === 0 ? null : (
    <section class="panel" id="p-fingerprints">
      <div class="panel-head">
        <h2>Fingerprints</h2>
        <span class="hint">
          anchored answers per phrasing against the latest · evidence against the line's own anchor and its paid peers'
        </span>
      </div>
      <div class="scroll">
        <table class="probes">
          <thead>
            <tr>
              <th>sample</th>
              <th>verdict</th>
              <th class="num">own</th>
              <th class="num">peers</th>
              <th class="num">threshold</th>
              <th>anchored answers</th>
              <th>latest</th>
            </tr>
          </thead>
          <tbody>
            {relay.fingerprints.map((f) => (
              <tr class={f.failing.length > 0 ? "fail" : "pass"} data-fingerprint={f.sample}>
                <td>{f.sample}</td>
                <td class={f.failing.length > 0 ? "s-bad" : "s-good"}>{f.failing.length > 0 ? `moved (${f.failing.join(", ")})` : "ok"}</td>
                <td class="num">{f.own.toFixed(1)}</td>
                <td class="num">{f.peers.toFixed(1)}</td>
                <td class="num">{f.threshold.toFixed(1)}</td>
                <td>
                  {f.variants.map((v) => (
                    <div>
                      {v.answers === 0
                        ? "none yet"
                        : `${v.anchor.map((a) => `${a.answer} ${Math.round(a.share * 100)}%`).join(", ")} (${v.answers})`}
                    </div>
                  ))}
                </td>
                <td>
                  {f.variants.map((v) => (
                    <div>{v.latest.map((a) => `${a.answer} ×${a.count}`).join(", ") || "–"}</div>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );

const ChartPanel: FC<{ id: string; hours: WindowHours }> = ({ id, hours }) => (
  <section class="panel" id="p-line-chart">
    <div class="panel-head">
      <h2>Probe scores per sample</h2>
      <nav class="tools window" aria-label="time window">
        {WINDOWS.map((w) => (
          <a href={`/lines/${id}?hours=${w}`} class={w === hours ? "on" : ""}>
            {w} h
          </a>
        ))}
      </nav>
    </div>
    <div id="line-chart" class="chart" />
    <p class="hint" id="trend-empty" hidden>
      No probe in this window yet.
    </p>
  </section>
);

type RecentProbe = LinePage["recent"][number];

/** Why a probe lost points: its failed (or unevaluable) checks, then the reasons in words. */
const Why: FC<{ r: RecentProbe }> = ({ r }) => (
  <td class="reasons">
    {r.checks
      .filter((c) => c.verdict !== "pass")
      .map((c) => (
        <span class={`check ${c.verdict === "fail" ? "s-bad" : "muted"}`} title={c.detail ?? ""} data-check={c.name}>
          {c.verdict === "fail" ? `✗ ${c.name}` : `${c.name} (broken sample)`}{" "}
        </span>
      ))}
    {r.reasons.length ? r.reasons.join("; ") : r.passed ? "" : (r.errorClass ?? "")}
  </td>
);

const ProbeRow: FC<{ r: RecentProbe; now: number }> = ({ r, now }) => (
  <tr class={r.passed ? "pass" : "fail"} data-probe={r.id}>
    <td>
      <Ago at={r.startedAt} now={now} />
      {r.trigger !== "schedule" ? <small class="muted"> {r.trigger}</small> : null}
    </td>
    <td>{r.sampleName}</td>
    <td>{r.errorClass ? <span class="s-bad">{`${r.errorClass}${r.status ? ` ${r.status}` : ""}`}</span> : (r.status ?? "–")}</td>
    <td class="num">{r.latencyMs}</td>
    <td class="num">
      <span class={`score ${r.passed ? "s-good" : "s-bad"}`} title={r.passed ? "passed" : "failed"}>
        {r.score.toFixed(0)}
      </span>
    </td>
    {COMPONENTS.map(([key]) => (
      <td class={`num comp-v ${compClass(r.components[key])}`}>{r.components[key].toFixed(2)}</td>
    ))}
    <td class="num">{r.contentLength}</td>
    <Why r={r} />
    <td class="excerpt">
      {r.excerpt.length > 90 ? (
        <details>
          <summary>{r.excerpt.slice(0, 90)}…</summary>
          <pre>{r.excerpt}</pre>
        </details>
      ) : (
        <span>{r.excerpt || <span class="muted">(empty)</span>}</span>
      )}
    </td>
  </tr>
);

const ProbesPanel: FC<{ recent: RecentProbe[]; now: number }> = ({ recent, now }) => (
  <section class="panel" id="p-probes">
    <div class="panel-head">
      <h2>Recent probes</h2>
      <span class="hint">newest first · components 0–1 · a component below 0.5 fails the probe</span>
    </div>
    <div id="probes-body" class="scroll tall" data-swap="">
      {recent.length === 0 ? (
        <p class="empty">Not probed yet.</p>
      ) : (
        <table class="probes">
          <thead>
            <tr>
              <th>when</th>
              <th>sample</th>
              <th>HTTP</th>
              <th class="num">ms</th>
              <th class="num">score</th>
              {COMPONENTS.map(([, label, title]) => (
                <th class="num" title={title}>
                  {label}
                </th>
              ))}
              <th class="num">chars</th>
              <th>why</th>
              <th>answer</th>
            </tr>
          </thead>
          <tbody>
            {recent.map((r) => (
              <ProbeRow r={r} now={now} />
            ))}
          </tbody>
        </table>
      )}
    </div>
  </section>
);

export const LinePageBody: FC<{ p: LinePage; canWrite: boolean; now: number; hours: WindowHours }> = ({ p, canWrite, now, hours }) => (
  <>
    <LineHead p={p} canWrite={canWrite} now={now} />
    <div class="row cards" id="line-cards" data-swap="">
      <LiveCard live={p.health.live} />
      <ScoreCard h={p.health} />
      <HealthCard h={p.health} now={now} />
      <ProbingCard p={p} />
      <RelayCard relay={p.health.relay} now={now} />
    </div>
    <ChartPanel id={p.line.id} hours={hours} />
    <ProbesPanel recent={p.recent} now={now} />
    <FingerprintPanel relay={p.health.relay} />
    <section class="panel" id="p-events">
      <div class="panel-head">
        <h2>Timeline of this line</h2>
      </div>
      <Timeline events={p.events} now={now} />
    </section>
    <script type="application/json" id="line-chart-data" data-swap="" dangerouslySetInnerHTML={{ __html: scriptJson(p.chart) }} />
  </>
);
