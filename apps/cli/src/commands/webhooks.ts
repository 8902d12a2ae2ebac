import { type Command, requireArg, withFlagHints } from "../command";
import type { Context } from "../context";
import { ApiFailure, CliError, EXIT, InvalidInput, UsageError } from "../errors";
import { ago, fields, table, truncate } from "../format";
import type { Webhook, WebhookList, WebhookTestResult } from "../types";

const WEBHOOK_FLAGS: Record<string, string> = {
  name: "NAME",
  url: "--endpoint",
  events: "--event",
  routes: "--route",
  format: "--format",
  secret: "--secret-env",
};

/** A sink by name or id. */
async function findWebhook(ctx: Context, ref: string): Promise<Webhook> {
  const { webhooks } = await ctx.api.get<WebhookList>("/v1/webhooks");
  const sink = webhooks.find((w) => w.name === ref || w.id === ref.toLowerCase());
  if (!sink) throw new ApiFailure(`webhook ${JSON.stringify(ref)} not found`, 404, "not_found");
  return sink;
}

/** The secret, from the environment variable --secret-env names (never from the command line: it would land in the shell's history). */
export function readSecret(ctx: Context, variable: string | undefined): string {
  if (variable === undefined) throw new UsageError("webhooks add: --secret-env VAR is required (the signing secret is read from it)");
  const secret = ctx.io.env[variable];
  if (!secret)
    throw new InvalidInput(`--secret-env: the environment variable ${variable} is not set`, [
      { field: "secret", message: `environment variable ${variable} is not set` },
    ]);
  return secret;
}

const lastError = (w: Webhook) => (w.delivery.lastError ? `${ago(w.delivery.lastError.at)}: ${w.delivery.lastError.message}` : "");

export const webhookCommands: Command[] = [
  {
    name: "webhooks add",
    args: "NAME",
    min: 1,
    max: 1,
    summary: "register a webhook sink (events POSTed, signed with HMAC-SHA256)",
    details: [
      "The secret signs every delivery (x-linewatch-signature: v1=<hex HMAC-SHA256 of `<timestamp>.<body>`>);",
      "it is read from the variable --secret-env names and never shown again. See docs/alerts.md#webhooks.",
    ].join("\n"),
    options: ["endpoint", "event", "route", "format", "secret-env"],
    async run(ctx, [name]) {
      const v = ctx.values;
      if (v.endpoint === undefined) throw new UsageError("webhooks add: --endpoint URL is required");
      // The API checks every value (kinds, format) and names the field: the body goes as given.
      const body: Record<string, unknown> = {
        name,
        url: v.endpoint,
        secret: readSecret(ctx, v["secret-env"]),
      };
      if (v.event) body.events = v.event.flatMap((e) => e.split(",")).map((e) => e.trim());
      if (v.route) {
        if (v.route.some((r) => r.includes("="))) throw new UsageError("webhooks add: --route takes a route name (no weight)");
        body.routes = v.route;
      }
      if (v.format !== undefined) body.format = v.format;
      const created = await withFlagHints(ctx.api.post<Webhook>("/v1/webhooks", body), WEBHOOK_FLAGS);
      ctx.output(created, () => `registered webhook ${created.name} (${created.format}, ${created.events.join(",")}) → ${created.url}`);
    },
  },
  {
    name: "webhooks list",
    max: 0,
    summary: "list webhook sinks with their queues, dead letters and last errors",
    async run(ctx) {
      const list = await ctx.api.get<WebhookList>("/v1/webhooks");
      ctx.output(list, () =>
        table(
          ["NAME", "FORMAT", "EVENTS", "ROUTES", "PENDING", "DELIVERED", "DEAD", "LAST ERROR", "URL"],
          list.webhooks.map((w) => [
            w.name,
            w.format,
            w.events.join(","),
            w.routes.join(",") || "all",
            w.delivery.pending,
            w.delivery.delivered,
            w.delivery.deadLetters,
            truncate(lastError(w), 60),
            w.url,
          ]),
        ),
      );
    },
  },
  {
    name: "webhooks show",
    args: "WEBHOOK",
    min: 1,
    max: 1,
    summary: "one webhook sink in detail (by name or id)",
    async run(ctx, [ref]) {
      const w = await findWebhook(ctx, requireArg(ref));
      ctx.output(w, () =>
        fields([
          ["name", w.name],
          ["id", w.id],
          ["url", w.url],
          ["format", w.format],
          ["events", w.events.join(", ")],
          ["routes", w.routes.join(", ") || "all"],
          ["pending", w.delivery.pending],
          ["oldest pending", w.delivery.oldestPendingAt ? ago(w.delivery.oldestPendingAt) : ""],
          ["delivered", w.delivery.delivered],
          ["failed attempts", w.delivery.failedAttempts],
          ["dead letters", w.delivery.deadLetters],
          ["last delivered", w.delivery.lastDeliveredAt ? ago(w.delivery.lastDeliveredAt) : ""],
          ["last error", lastError(w)],
        ]),
      );
    },
  },
  {
    name: "webhooks test",
    args: "WEBHOOK",
    min: 1,
    max: 1,
    summary: "send a sink a signed test event now; exit 1 unless its receiver answers 2xx",
    async run(ctx, [ref]) {
      const w = await findWebhook(ctx, requireArg(ref));
      const result = await ctx.api.post<WebhookTestResult>(`/v1/webhooks/${w.id}/test`, {});
      if (ctx.json) ctx.printJson(result);
      if (!result.ok)
        throw new CliError(`webhook ${w.name}: the test delivery failed: ${result.error ?? "no 2xx"}`, EXIT.failed, [], "delivery_failed");
      if (!ctx.json) ctx.print(`webhook ${w.name}: delivered (HTTP ${result.status}, ${Math.round(result.latencyMs)} ms)`);
    },
  },
  {
    name: "webhooks rm",
    args: "WEBHOOK",
    min: 1,
    max: 1,
    summary: "delete a webhook sink (its queued deliveries go with it)",
    async run(ctx, [ref]) {
      const w = await findWebhook(ctx, requireArg(ref));
      await ctx.api.delete(`/v1/webhooks/${w.id}`);
      ctx.output({ deleted: w.name }, () => `deleted webhook ${w.name}`);
    },
  },
];
