import type { LineHealth } from "@linewatch/contract";
import type { AppDeps } from "../deps";
import type { Engine } from "../engine";
import { ApiError, type ErrorDetail, envelope } from "../errors";
import { lineHealthRoutes } from "../routes/lines/health";
import { lineRoutes } from "../routes/lines/index";
import { sampleRoutes } from "../routes/samples/index";

export type { LineHealth };

export type ApiResult<T> =
  | { ok: true; status: number; body: T }
  | { ok: false; status: number; error: { code: string; message: string; details: ErrorDetail[] } };

/**
 * The dashboard's writes (and the line health view) go through the API's own routers, in process:
 * the same zod schemas, URL guard, route checks, conflict errors and engine hooks as POST /v1/lines,
 * so a form can never do something the API would refuse, or miss a side effect the API has.
 * Authorization happens before: the dashboard checked the viewer's role.
 */
export class InProcessApi {
  private readonly lines;
  private readonly health;
  private readonly samples;

  constructor(deps: AppDeps, engine: Engine) {
    const hooks = {
      linesChanged: (routes: string[]) => engine.registryChanged(routes),
      adminStateChanged: (lineId: string, adminState: Parameters<Engine["adminStateChanged"]>[1], routes: string[]) =>
        engine.adminStateChanged(lineId, adminState, routes),
    };
    const onError = (error: Error) => {
      if (error instanceof ApiError) return Response.json(envelope(error.code, error.message, error.details), { status: error.status });
      throw error;
    };
    this.lines = lineRoutes(deps, hooks);
    this.lines.onError(onError);
    this.health = lineHealthRoutes(deps, engine);
    this.health.onError(onError);
    this.samples = sampleRoutes(deps);
    this.samples.onError(onError);
  }

  private async call<T>(
    app: { request: (path: string, init: RequestInit) => Response | Promise<Response> },
    method: string,
    path: string,
    body?: unknown,
  ): Promise<ApiResult<T>> {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { "content-type": "application/json" };
    }
    const res = await app.request(path, init);
    const json = res.status === 204 ? null : await res.json();
    if (res.ok) return { ok: true, status: res.status, body: json as T };
    return { ok: false, status: res.status, error: (json as ReturnType<typeof envelope>).error };
  }

  createLine(body: unknown) {
    return this.call<{ id: string; name: string }>(this.lines, "POST", "/", body);
  }

  patchLine(id: string, body: unknown) {
    return this.call<{ id: string; name: string }>(this.lines, "PATCH", `/${id}`, body);
  }

  createSample(body: unknown) {
    return this.call<{ id: string; name: string }>(this.samples, "POST", "/", body);
  }

  lineHealth(id: string) {
    return this.call<LineHealth>(this.health, "GET", `/${id}/health`);
  }

  probeLine(id: string) {
    return this.call<{ results: unknown[] }>(this.health, "POST", `/${id}/probe`);
  }
}
