import type { FC } from "hono/jsx";

export const LoginBody: FC<{ next: string; error?: string; open: boolean }> = ({ next, error, open }) => (
  <section class="panel narrow">
    <h1>Sign in</h1>
    {open ? (
      <p>
        No token exists yet, so the dashboard is open: <a href="/">go to the overview</a>. Create an admin token with{" "}
        <code>POST /v1/tokens</code> to close it.
      </p>
    ) : (
      <form method="post" action="/login">
        <p class="muted">
          Paste an admin or viewer token. It is kept in an HttpOnly cookie of this site; the API itself still takes only bearer tokens.
        </p>
        {error ? (
          <div class="form-error" role="alert">
            {error}
          </div>
        ) : null}
        <label class="field">
          <span class="label">token</span>
          <input type="password" name="token" id="f-token" autocomplete="off" autofocus required />
        </label>
        <input type="hidden" name="next" value={next} />
        <div class="actions">
          <button type="submit" class="primary">
            Sign in
          </button>
        </div>
      </form>
    )}
  </section>
);

export const MessageBody: FC<{ title: string; message: string }> = ({ title, message }) => (
  <section class="panel narrow">
    <h1>{title}</h1>
    <p>{message}</p>
    <p>
      <a href="/">Back to the overview</a>
    </p>
  </section>
);
