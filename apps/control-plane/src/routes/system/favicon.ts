import type { Context } from "hono";

/** The icon of the docs page and the dashboard (a line and its pulse), so browsers ask nothing that 404s. */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d2330"/>' +
  '<path d="M1.5 9h3l1.5-4 2.5 7 2-5 1 2h3" fill="none" stroke="#3fd08a" stroke-width="1.6" stroke-linejoin="round"/></svg>';

/** Served as /favicon.svg (what the pages link) and /favicon.ico (what browsers try without a link). */
export const favicon = (c: Context) =>
  c.body(FAVICON_SVG, 200, { "content-type": "image/svg+xml", "cache-control": "public, max-age=86400" });
