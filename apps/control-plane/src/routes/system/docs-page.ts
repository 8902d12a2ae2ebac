import type { OpenAPIHono } from "@hono/zod-openapi";
import { html, raw } from "hono/html";

type Doc = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;
type PathItem = NonNullable<Doc["paths"]>[string];
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
const isMethod = (key: string): key is (typeof METHODS)[number] => (METHODS as readonly string[]).includes(key);

/** The operations of a path, in the order the document lists them. */
const operationsOf = (path: string, item: PathItem) =>
  Object.keys(item)
    .filter(isMethod)
    .flatMap((method) => {
      const op = item[method];
      return op ? [{ path, method: method.toUpperCase(), op }] : [];
    });

/** The API reference, rendered from /openapi.json on the server (these machines are offline: no CDN UI). */
export function renderDocsPage(doc: Doc) {
  const ops = Object.entries(doc.paths ?? {}).flatMap(([path, item]) => operationsOf(path, item));
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${doc.info.title} API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>
body{font:14px/1.5 system-ui,sans-serif;max-width:980px;margin:2rem auto;padding:0 1rem;color:#1d2330}
h1{font-size:1.5rem} .op{border:1px solid #d8dce4;border-radius:6px;margin:.6rem 0;padding:.5rem .8rem}
.m{display:inline-block;min-width:4.2rem;font-weight:600} .GET{color:#1b6ac9}.POST{color:#1a8a4a}.PATCH{color:#a66a00}.DELETE{color:#b3261e}
code{background:#f2f4f8;padding:0 .25rem;border-radius:3px} details pre{background:#f7f8fa;padding:.5rem;overflow:auto;font-size:12px}
.r{color:#5b6475;font-size:12px}
</style></head><body>
<h1>${doc.info.title} <small>${doc.info.version}</small></h1>
<p>${doc.info.description ?? ""} The machine-readable description is at <a href="/openapi.json"><code>/openapi.json</code></a>.
Errors always have the body <code>{"error": {"code", "message", "details"}}</code>.</p>
${ops.map(
  ({ path, method, op }) => html`<div class="op"><span class="m ${method}">${method}</span><code>${path}</code> — ${op.summary ?? ""}
<div class="r">responses: ${Object.entries(op.responses ?? {})
    .map(([s, r]) => `${s} ${r.description ?? ""}`)
    .join(" · ")}</div>
${op.parameters?.length ? html`<div class="r">parameters: ${op.parameters.map((p) => ("name" in p ? `${p.name} (${p.in})` : p.$ref)).join(", ")}</div>` : ""}
${requestSchema(op.requestBody) ? html`<details><summary>request body</summary><pre>${JSON.stringify(requestSchema(op.requestBody), null, 2)}</pre></details>` : raw("")}
</div>`,
)}
</body></html>`;
}

/** The JSON schema of a request body, when it has one. */
const requestSchema = (body: NonNullable<PathItem["post"]>["requestBody"]) =>
  body && "content" in body ? body.content["application/json"]?.schema : undefined;
