import { html, raw } from "hono/html";

type Doc = { info: { title: string; version: string; description?: string }; paths?: Record<string, Record<string, Operation>> };
type Operation = {
  summary?: string;
  tags?: string[];
  parameters?: { name: string; in: string; description?: string }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string }>;
};

/** The API reference, rendered from /openapi.json on the server (these machines are offline: no CDN UI). */
export function renderDocsPage(doc: Doc) {
  const ops = Object.entries(doc.paths ?? {}).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );
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
${op.parameters?.length ? html`<div class="r">parameters: ${op.parameters.map((p) => `${p.name} (${p.in})`).join(", ")}</div>` : ""}
${op.requestBody?.content?.["application/json"]?.schema ? html`<details><summary>request body</summary><pre>${JSON.stringify(op.requestBody.content["application/json"].schema, null, 2)}</pre></details>` : raw("")}
</div>`,
)}
</body></html>`;
}
