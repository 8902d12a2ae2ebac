import type { Child, FC } from "hono/jsx";
import type { Viewer } from "../session";

export interface PageShell {
  title: string;
  /** Asset name → URL with its content hash. */
  asset: (name: string) => string;
  viewer: Viewer | null;
  now: number;
  /** Live pages poll for changes this often; absent: a static page. */
  refreshMs?: number;
  /** The path the login/logout forms come back to. */
  path: string;
  charts?: boolean;
  /** What the live page shows is as of this database state (the poll compares it). */
  fingerprint?: string;
}

const RoleBadge: FC<{ viewer: Viewer | null; path: string }> = ({ viewer, path }) => {
  if (!viewer) return null;
  if (viewer.role === "open") {
    return (
      <span
        class="who open"
        title="No API token exists yet, so anyone who reaches this port may change things. Create an admin token (POST /v1/tokens) to close it."
      >
        open mode · no tokens
      </span>
    );
  }
  return (
    <span class="who">
      {viewer.role} · {viewer.tokenName}
      <form method="post" action="/logout" class="inline">
        <input type="hidden" name="next" value={path} />
        <button type="submit" class="link">
          sign out
        </button>
      </form>
    </span>
  );
};

export const Layout: FC<PageShell & { children?: Child; header?: Child }> = (p) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{p.title}</title>
      <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
      {p.charts ? <link rel="stylesheet" href={p.asset("uplot.css")} /> : null}
      <link rel="stylesheet" href={p.asset("dashboard.css")} />
    </head>
    <body data-now={String(p.now)} data-refresh-ms={p.refreshMs ? String(p.refreshMs) : undefined} data-fingerprint={p.fingerprint}>
      <header class="top">
        <a class="brand" href="/">
          <span class="logo" aria-hidden="true">
            ◉
          </span>{" "}
          linewatch
        </a>
        <nav>
          <a href="/">overview</a>
          <a href="/replay">replay</a>
          <a href="/webhooks">webhooks</a>
          <a href="/docs">API</a>
          <a href="/metrics">metrics</a>
        </nav>
        <div class="top-mid">{p.header}</div>
        {p.refreshMs ? (
          <span id="live" class="live" title="The page polls for changes and redraws what changed">
            <span class="dot" /> <span id="live-text">live</span>
          </span>
        ) : null}
        <RoleBadge viewer={p.viewer} path={p.path} />
      </header>
      <main>{p.children}</main>
      {p.charts ? <script src={p.asset("uplot.js")} defer /> : null}
      <script src={p.asset("dashboard.js")} defer />
    </body>
  </html>
);

/** A fixed message after a form succeeded (`?done=…`): text from a table, never from the URL. */
export const DONE_MESSAGES: Record<string, (name: string) => string> = {
  "line-added": (n) => `Line ${n} registered. Its first probes run within its interval; "probe now" on its page runs them at once.`,
  "sample-added": (n) => `Sample ${n} added: it applies from the next probe of each line it matches.`,
  drained: (n) => `${n} drained: its weight is 0 in every route; it is still probed.`,
  disabled: (n) => `${n} disabled: weight 0, no more probes.`,
  active: (n) => `${n} re-enabled: it returns through its own health (probation if it was cooling down).`,
  probed: (n) => `${n} probed with every sample that applies.`,
};

export const Notice: FC<{ done?: string | undefined; name?: string | undefined }> = ({ done, name }) => {
  const message = done ? DONE_MESSAGES[done] : undefined;
  return message ? (
    <div class="notice" role="status">
      {message(name ?? "")}
    </div>
  ) : null;
};
