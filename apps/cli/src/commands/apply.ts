import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "../command";
import type { Context } from "../context";
import { ApiFailure, UsageError } from "../errors";
import { type Change, type Current, changeView, describeChange, planChanges, summarize } from "../plan";
import { readDataFile } from "../read-file";
import type { LineList, RouteList, SampleList, WebhookList } from "../types";

/**
 * The registry as the API returns it. Webhook sinks are admin's to read: apply reads them when its
 * file has a webhooks: section; export reads them when its token may ("optional": a viewer's export
 * leaves them out, saying so).
 */
async function readCurrent(ctx: Context, webhooks: "required" | "optional" | "no"): Promise<Current> {
  const [routes, lines, samples, sinks] = await Promise.all([
    ctx.api.get<RouteList>("/v1/routes"),
    ctx.api.get<LineList>("/v1/lines"),
    ctx.api.get<SampleList>("/v1/samples"),
    webhooks === "no"
      ? null
      : ctx.api.get<WebhookList>("/v1/webhooks").catch((error: unknown) => {
          if (webhooks === "optional" && error instanceof ApiFailure && error.status === 403) {
            ctx.warn("webhooks left out: reading them needs an admin token");
            return null;
          }
          throw error;
        }),
  ]);
  return { routes: routes.routes, lines: lines.lines, samples: samples.samples, ...(sinks ? { webhooks: sinks.webhooks } : {}) };
}

const PATHS = { route: "/v1/routes", line: "/v1/lines", sample: "/v1/samples", webhook: "/v1/webhooks" } as const;

async function perform(ctx: Context, c: Change): Promise<void> {
  const base = PATHS[c.kind];
  if (c.action === "create") await ctx.api.post(base, c.body);
  else if (c.action === "update") await ctx.api.patch(`${base}/${encodeURIComponent(c.target)}`, c.patch);
  else await ctx.api.delete(`${base}/${encodeURIComponent(c.target)}`);
}

export const applyCommands: Command[] = [
  {
    name: "apply",
    max: 0,
    summary: "make the registry match a file of routes, lines, samples and webhooks",
    details: [
      "Idempotent: applying the same file again changes nothing. Entries are matched by name.",
      "Without --prune nothing is deleted; with it, whatever the file's sections (routes:, lines:,",
      "samples:, webhooks:) do not list goes, except the shipped samples. A line's key comes from the environment",
      "variable its apiKeyEnv names, sent when the line has no key yet (or always, with --update-keys);",
      "a webhook's signing secret likewise from its secretEnv (when it is created, or with --update-keys);",
      "a line's adminState is changed only when the file gives one.",
    ].join("\n"),
    options: ["file", "prune", "dry-run", "update-keys"],
    async run(ctx) {
      const v = ctx.values;
      if (v.file === undefined) throw new UsageError("apply: -f FILE is required");
      const { parseRegistryFile } = await import("../registry-file");
      const file = parseRegistryFile(readDataFile(v.file, ctx.io.cwd), v.file);
      const changes = planChanges(file, await readCurrent(ctx, file.sections.webhooks ? "required" : "no"), {
        prune: v.prune === true,
        updateKeys: v["update-keys"] === true,
        env: (name) => ctx.io.env[name],
      });
      const dryRun = v["dry-run"] === true;
      const report = (applied: number) => ({ file: v.file, url: ctx.api.baseUrl, dryRun, changes: changes.map(changeView), applied });

      if (changes.length === 0) {
        ctx.output(report(0), () => `no changes: ${ctx.api.baseUrl} matches ${v.file}`);
        return;
      }
      if (!ctx.json) ctx.print(`${changes.map(describeChange).join("\n")}\n${summarize(changes)}`);
      if (dryRun) {
        if (ctx.json) ctx.printJson(report(0));
        else ctx.print("dry run: nothing changed");
        return;
      }
      let applied = 0;
      for (const c of changes) {
        try {
          await perform(ctx, c);
        } catch (error) {
          if (!(error instanceof ApiFailure)) throw error;
          // Say how far it got: the file can be fixed and applied again (what was done is not redone).
          throw new ApiFailure(
            `applied ${applied} of ${changes.length} changes, then ${c.action} ${c.kind} ${c.name} failed: ${error.message}`,
            error.status,
            error.code,
            error.details,
          );
        }
        applied += 1;
      }
      ctx.output(report(applied), () => `applied ${applied} change${applied === 1 ? "" : "s"} to ${ctx.api.baseUrl}`);
    },
  },
  {
    name: "export",
    max: 0,
    summary: "write the registry as an apply file (YAML; keys and secrets never, shipped samples not)",
    options: ["output"],
    async run(ctx) {
      const { registryToFile, registryToYaml } = await import("../registry-file");
      const current = await readCurrent(ctx, "optional");
      const header = [
        ` linewatch registry exported from ${ctx.api.baseUrl}`,
        " Apply with: linewatch apply -f FILE [--dry-run] [--prune]",
        " API keys are never exported: a line with a key names the environment variable apply reads it from (apiKeyEnv).",
        " Webhook secrets neither (secretEnv); a webhook's url is written as it is (a Slack one is itself a credential).",
        " Shipped samples (probes/) are left out; they come with the control plane.",
      ].join("\n");
      const text = ctx.json ? `${JSON.stringify(registryToFile(current), null, 2)}\n` : registryToYaml(current, header);
      if (ctx.values.output === undefined) return ctx.io.stdout(text);
      writeFileSync(resolve(ctx.io.cwd, ctx.values.output), text);
      const samples = current.samples.filter((s) => s.source !== "shipped").length;
      ctx.io.stderr(
        `wrote ${current.routes.length} routes, ${current.lines.length} lines and ${samples} samples to ${ctx.values.output}\n`,
      );
    },
  },
];
