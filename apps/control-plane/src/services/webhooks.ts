// Webhook sinks (docs/alerts.md#webhooks): created, changed, deleted, listed with what became of
// their deliveries, and tested. Admin only (auth.ts). The URL goes through the upstream guard lines
// go through; the signing secret is sealed like a line's key and never comes back.
import { isUuid, type WebhookCreate, type WebhookPatch, type WebhookResponse, type WebhookTestResult } from "@linewatch/contract";
import type { WebhookEventKind, WebhookFormat } from "@linewatch/core";
import {
  deleteWebhook,
  getRouteRow,
  getWebhook,
  insertWebhook,
  listWebhooks,
  updateWebhook,
  type WebhookQueue,
  type WebhookRow,
  type WebhookWrite,
  webhookQueues,
} from "@linewatch/db";
import { upstreamUrlProblem } from "@linewatch/router-client";
import type { AppDeps } from "../deps";
import type { Engine } from "../engine";
import { NotFoundError, ValidationError } from "../errors";
import { duplicateName } from "./duplicate-name";

const iso = (d: Date | null) => d?.toISOString() ?? null;

function view(row: WebhookRow, queue: WebhookQueue | undefined): WebhookResponse {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    // Only the contract's kinds and formats are ever written (its schemas).
    events: row.events as WebhookEventKind[],
    routes: row.routes,
    format: row.format as WebhookFormat,
    hasSecret: row.secretEnc !== "",
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    delivery: {
      pending: queue?.pending ?? 0,
      oldestPendingAt: iso(queue?.oldestEventAt ?? null),
      delivered: row.delivered,
      failedAttempts: row.failedAttempts,
      deadLetters: row.deadLetters,
      lastDeliveredAt: iso(row.lastDeliveredAt),
      lastError: row.lastError && row.lastErrorAt ? { at: row.lastErrorAt.toISOString(), message: row.lastError } : null,
    },
  };
}

const webhookNamed = (name: string | undefined) => `a webhook named ${JSON.stringify(name)} already exists`;

export class WebhookService {
  constructor(
    private readonly deps: AppDeps,
    private readonly engine: Pick<Engine, "webhooks">,
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  async list(): Promise<WebhookResponse[]> {
    const [rows, queues] = await Promise.all([listWebhooks(this.db), webhookQueues(this.db)]);
    const byId = new Map(queues.map((q) => [q.webhookId, q]));
    return rows.map((r) => view(r, byId.get(r.id)));
  }

  async get(id: string): Promise<WebhookResponse> {
    const row = await this.row(id);
    const queue = (await webhookQueues(this.db)).find((q) => q.webhookId === row.id);
    return view(row, queue);
  }

  async create(input: WebhookCreate): Promise<WebhookResponse> {
    await this.check(input);
    const write: WebhookWrite = {
      name: input.name,
      url: input.url,
      events: input.events,
      routes: input.routes,
      format: input.format,
      secretEnc: this.deps.secrets.encrypt(input.secret),
    };
    const row = await insertWebhook(this.db, write, new Date(this.deps.clock.now())).catch(duplicateName(webhookNamed(input.name)));
    return view(row, undefined);
  }

  /** A change applies to the deliveries fanned out from then on; those already queued keep their body. */
  async update(id: string, patch: WebhookPatch): Promise<WebhookResponse> {
    await this.row(id);
    await this.check(patch);
    const { secret, ...rest } = patch;
    const write: Partial<WebhookWrite> = { ...rest };
    if (secret !== undefined) write.secretEnc = this.deps.secrets.encrypt(secret);
    const row = await updateWebhook(this.db, id, write, new Date(this.deps.clock.now())).catch(duplicateName(webhookNamed(patch.name)));
    if (!row) throw new NotFoundError(`webhook ${id}`);
    return this.get(row.id);
  }

  /** Its queued deliveries go with it. */
  async remove(id: string): Promise<void> {
    if (!isUuid(id) || !(await deleteWebhook(this.db, id))) throw new NotFoundError(`webhook ${id}`);
  }

  /** Send a signed test event now and say how the receiver answered (nothing is queued or counted). */
  async test(id: string): Promise<WebhookTestResult> {
    const row = await this.row(id);
    const attempt = await this.engine.webhooks.sendTest(row);
    return { ok: attempt.ok, status: attempt.status, latencyMs: attempt.latencyMs, error: attempt.error };
  }

  private async row(id: string): Promise<WebhookRow> {
    const row = isUuid(id) ? await getWebhook(this.db, id) : null;
    if (!row) throw new NotFoundError(`webhook ${id}`);
    return row;
  }

  /** The URL may be called (the upstream guard of lines), and every route of the filter exists (404 naming the field). */
  private async check(body: Pick<WebhookPatch, "url" | "routes">): Promise<void> {
    if (body.url) {
      const problem = upstreamUrlProblem(body.url, this.deps.config.allowUpstreamHosts);
      if (problem) throw ValidationError.field("url", problem);
    }
    for (const [i, route] of (body.routes ?? []).entries()) {
      if (!(await getRouteRow(this.db, route))) {
        throw NotFoundError.reference(`routes.${i}`, `route ${JSON.stringify(route)}`, "; create it with POST /v1/routes");
      }
    }
  }
}
