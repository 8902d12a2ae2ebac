// Signing in and out: a token typed into /login becomes an HttpOnly cookie.
import type { Hono } from "hono";
import type { AuthEnv } from "../auth";
import { formValues } from "./forms";
import type { Pages } from "./pages";
import { checkLoginToken, clearTokenCookie, isSameOrigin, safeNext, setTokenCookie } from "./session";
import { LoginBody } from "./views/login";

export function loginRoutes(app: Hono<AuthEnv>, pages: Pages) {
  app.get("/login", async (c) => {
    const open = await pages.tokens.isOpen();
    const next = safeNext(c.req.query("next"));
    const error = c.req.query("expired") ? "That token is no longer valid: sign in again." : undefined;
    return pages.page(c, null, "Sign in · linewatch", <LoginBody next={next} error={error} open={open} />, 200);
  });

  app.post("/login", pages.formLimit, async (c) => {
    if (!isSameOrigin(c)) return pages.message(c, null, "Forbidden", "Refused", "This form came from another site.", 403);
    const values = formValues(await c.req.parseBody());
    const next = safeNext(values.next);
    const checked = await checkLoginToken(pages.tokens, (values.token ?? "").trim());
    if (!checked.ok) return pages.page(c, null, "Sign in · linewatch", <LoginBody next={next} error={checked.message} open={false} />, 401);
    setTokenCookie(c, (values.token ?? "").trim());
    return c.redirect(next, 303);
  });

  app.post("/logout", pages.formLimit, async (c) => {
    if (!isSameOrigin(c)) return pages.message(c, null, "Forbidden", "Refused", "This form came from another site.", 403);
    clearTokenCookie(c);
    return c.redirect("/login", 303);
  });
}
