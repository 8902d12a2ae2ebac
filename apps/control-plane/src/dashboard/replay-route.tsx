// The replay view: a GET form, so a result can be bookmarked; runs only once the form was sent.
import type { ReplayReport } from "@linewatch/core";
import type { Context, Hono, MiddlewareHandler } from "hono";
import { parse as parseYaml } from "yaml";
import type { AuthEnv } from "../auth";
import { ApiError } from "../errors";
import type { Services } from "../services/index";
import type { Pages } from "./pages";
import { ReplayBody, type ReplayForm } from "./views/replay-page";

export function replayRoute(app: Hono<AuthEnv>, services: Services, pages: Pages, gzip: MiddlewareHandler) {
  app.get("/replay", gzip, async (c) => {
    const viewer = await pages.reader(c);
    if (viewer instanceof Response) return viewer;
    const names = await services.views.names();
    const q = (k: string) => c.req.query(k) ?? "";
    const form: ReplayForm = { since: q("since"), from: q("from"), to: q("to"), line: q("line") || (names[0] ?? ""), policy: q("policy") };
    const sent = c.req.query("line") !== undefined;
    const { report, error } = sent ? await run(c, services, form) : { report: null, error: null };
    return pages.page(
      c,
      viewer,
      "replay · linewatch",
      <ReplayBody form={form} lines={names} report={report} error={error} />,
      error ? 400 : 200,
    );
  });
}

/** The form's replay: its report, or the message of what was wrong with the form. */
async function run(c: Context, services: Services, form: ReplayForm): Promise<{ report: ReplayReport | null; error: string | null }> {
  try {
    const policy = form.policy.trim() === "" ? undefined : (parseYaml(form.policy) as Record<string, unknown>);
    const prepared = await services.replay.prepare({
      ...(form.since ? { since: form.since } : {}),
      ...(form.from ? { from: form.from } : {}),
      ...(form.to ? { to: form.to } : {}),
      ...(policy !== undefined ? { policy } : {}),
      ...(form.line ? { timeline: form.line } : {}),
    });
    return { report: await prepared.run({ signal: c.req.raw.signal }), error: null };
  } catch (e) {
    if (e instanceof ApiError) return { report: null, error: e.message };
    if (e instanceof Error && e.name === "YAMLParseError") return { report: null, error: `policy: ${e.message.split("\n")[0]}` };
    throw e;
  }
}
