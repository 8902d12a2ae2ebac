// The overview at `/`, the small state the page polls, and the forms that add a line or a sample.
import type { Context, Hono, MiddlewareHandler } from "hono";
import type { AuthEnv } from "../auth";
import type { AppDeps } from "../deps";
import { ApiError } from "../errors";
import type { Services } from "../services/index";
import { type FormErrors, type FormValues, formErrorsFrom, formValues, type Parsed, parseLineForm, parseSampleForm } from "./forms";
import { type Pages, parseHours, parseRefresh, withDone } from "./pages";
import { canWrite, type Viewer } from "./session";
import { emptyForm, type FormState } from "./views/forms";
import { Notice } from "./views/layout";
import { OverviewBody, Summary } from "./views/overview";

type OpenForm = "line" | "sample";
interface Forms {
  line?: FormState;
  sample?: FormState;
  open?: OpenForm;
  status?: 200 | 400 | 404 | 409;
}

/** What the page may echo back into a form after an error: never a secret. */
const echo = (values: FormValues): FormValues => {
  const { apiKey: _secret, ...rest } = values;
  return rest;
};

export function overviewRoutes(
  app: Hono<AuthEnv>,
  deps: Pick<AppDeps, "clock">,
  services: Services,
  pages: Pages,
  gzip: MiddlewareHandler,
) {
  const overview = services.views.overview;

  async function render(c: Context, viewer: Viewer, forms: Forms = {}) {
    const o = await overview.load(parseHours(c.req.query("hours")));
    const bad = (o.counts.cooldown ?? 0) + (o.counts.degraded ?? 0);
    const body = (
      <>
        <Notice done={c.req.query("done")} name={c.req.query("name")} />
        <OverviewBody
          o={o}
          canWrite={canWrite(viewer)}
          lineForm={forms.line ?? emptyForm()}
          sampleForm={forms.sample ?? emptyForm()}
          open={forms.open}
        />
      </>
    );
    const extra = { refreshMs: parseRefresh(c.req.query("refresh")), charts: true, header: <Summary o={o} />, fingerprint: o.fingerprint };
    return pages.page(c, viewer, bad > 0 ? `(${bad}) linewatch` : "linewatch", body, forms.status ?? 200, extra);
  }

  /**
   * A form's submission: parsed into what the service takes, handed to it, and on success back to the
   * overview with a notice; a refusal (the form's or the service's) shows the form again with each
   * error next to its field.
   */
  async function submit<T>(
    c: Context,
    form: OpenForm,
    parse: (values: FormValues) => Parsed<T>,
    call: (value: T) => Promise<{ name: string }>,
    opts: { done: string; echo: (values: FormValues) => FormValues },
  ) {
    const viewer = await pages.guard(c, "write");
    if (viewer instanceof Response) return viewer;
    const values = formValues(await c.req.parseBody());
    const again = (errors: FormErrors, status: 400 | 404 | 409) => {
      const state: FormState = { values: opts.echo(values), errors };
      return render(c, viewer, { ...(form === "line" ? { line: state } : { sample: state }), open: form, status });
    };
    const parsed = parse(values);
    if (!parsed.ok) return again(parsed.errors, 400);
    try {
      const created = await call(parsed.value);
      overview.invalidate();
      return c.redirect(withDone("/", opts.done, created.name), 303);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return again(formErrorsFrom(error, parsed.toField), error.status === 404 || error.status === 409 ? error.status : 400);
    }
  }

  app.get("/", gzip, async (c) => {
    const viewer = await pages.reader(c);
    return viewer instanceof Response ? viewer : render(c, viewer);
  });

  /** The small endpoint the page polls: it fetches the panels again only when this changes. */
  app.get("/dashboard/state.json", async (c) => {
    const viewer = await pages.guard(c, "read");
    if (viewer instanceof Response) return viewer;
    c.header("cache-control", "no-store");
    return c.json({ fingerprint: await overview.fingerprint(), now: deps.clock.now() });
  });

  app.post("/dashboard/lines", pages.formLimit, (c) =>
    submit(c, "line", parseLineForm, (line) => services.lines.create(line), { done: "line-added", echo }),
  );
  app.post("/dashboard/samples", pages.formLimit, (c) =>
    submit(c, "sample", parseSampleForm, (sample) => services.samples.create(sample), { done: "sample-added", echo: (v) => v }),
  );
}
