import type { WebhookResponse } from "@linewatch/contract";
import type { FC } from "hono/jsx";
import { ago, iso } from "./format";

/** Where a sink sends, without the path: a Slack URL's path is its credential, and viewers see this page. */
export function endpointOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "";
  }
}

const When: FC<{ at: string | null; now: number }> = ({ at, now }) =>
  at ? <time title={at}>{ago(now - Date.parse(at))} ago</time> : <span class="muted">never</span>;

/** The webhook sinks with what became of their deliveries (docs/alerts.md#webhooks); changes go through the API or CLI. */
export const WebhooksBody: FC<{ webhooks: WebhookResponse[]; now: number }> = ({ webhooks, now }) => (
  <section class="panel" id="p-webhooks">
    <div class="panel-head">
      <h2>Webhooks</h2>
      <span class="hint">
        sinks events are pushed to, signed; add them with <code>linewatch webhooks add</code> or <code>POST /v1/webhooks</code>
      </span>
    </div>
    {webhooks.length === 0 ? (
      <p class="empty">no webhook sinks</p>
    ) : (
      <table>
        <thead>
          <tr>
            <th>name</th>
            <th>endpoint</th>
            <th>format</th>
            <th>events</th>
            <th>routes</th>
            <th class="num">pending</th>
            <th>oldest pending</th>
            <th class="num">delivered</th>
            <th class="num">failed attempts</th>
            <th class="num">dead letters</th>
            <th>last delivered</th>
            <th>last error</th>
          </tr>
        </thead>
        <tbody>
          {webhooks.map((w) => (
            <tr data-webhook={w.name}>
              <td>{w.name}</td>
              <td>{endpointOf(w.url)}</td>
              <td>{w.format}</td>
              <td>{w.events.join(", ")}</td>
              <td>{w.routes.length > 0 ? w.routes.join(", ") : <span class="muted">all</span>}</td>
              <td class="num">{w.delivery.pending}</td>
              <td>{w.delivery.oldestPendingAt ? <When at={w.delivery.oldestPendingAt} now={now} /> : <span class="muted">–</span>}</td>
              <td class="num">{w.delivery.delivered}</td>
              <td class="num">{w.delivery.failedAttempts}</td>
              <td class={w.delivery.deadLetters > 0 ? "num bad" : "num"} data-dead-letters={String(w.delivery.deadLetters)}>
                {w.delivery.deadLetters}
              </td>
              <td>
                <When at={w.delivery.lastDeliveredAt} now={now} />
              </td>
              <td>
                {w.delivery.lastError ? (
                  <span title={iso(Date.parse(w.delivery.lastError.at))}>
                    <When at={w.delivery.lastError.at} now={now} />: {w.delivery.lastError.message}
                  </span>
                ) : (
                  <span class="muted">none</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </section>
);
