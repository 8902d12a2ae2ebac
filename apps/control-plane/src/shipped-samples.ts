import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SampleCreateSchema } from "@linewatch/contract";
import type { SampleExpect } from "@linewatch/core";
import { upsertShippedSample } from "@linewatch/db";
import { parse } from "yaml";
import type { AppDeps } from "./deps";
import { validationErrorFrom } from "./validation";

export const shippedProbesDir = fileURLToPath(new URL("../../../probes", import.meta.url));

function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return yamlFiles(path);
      return /\.ya?ml$/.test(name) ? [path] : [];
    });
}

/**
 * Upsert every sample under probes/ by name, validated by the same schema as POST /v1/samples.
 * A bad file is reported and skipped: one broken sample must not keep the control plane down.
 */
export async function loadShippedSamples(deps: Pick<AppDeps, "database" | "clock" | "logger">, dir = shippedProbesDir) {
  const loaded: string[] = [];
  for (const file of yamlFiles(dir)) {
    let raw: unknown;
    try {
      raw = parse(readFileSync(file, "utf8"));
    } catch (error) {
      deps.logger.error("cannot parse shipped sample", { file, error: String(error) });
      continue;
    }
    const parsed = SampleCreateSchema.safeParse(raw);
    if (!parsed.success) {
      deps.logger.error("invalid shipped sample", { file, error: validationErrorFrom(parsed.error, "sample").message });
      continue;
    }
    const s = parsed.data;
    const row = await upsertShippedSample(
      deps.database.db,
      { ...s, expect: s.expect as SampleExpect, timeoutMs: s.timeoutMs ?? null },
      new Date(deps.clock.now()),
    );
    if (row) loaded.push(row.name);
  }
  return loaded;
}
