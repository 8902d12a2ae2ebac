import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SampleCreateSchema } from "@linewatch/contract";
import type { SampleExpect } from "@linewatch/core";
import { deleteShippedFingerprintSamples, upsertShippedSample } from "@linewatch/db";
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
 * `fingerprints: false` leaves the fingerprint samples out (they cost probes: docs/tables.md#probe-frequency)
 * and removes those an earlier start loaded, unless an operator edited them.
 */
export async function loadShippedSamples(
  deps: Pick<AppDeps, "database" | "clock" | "logger">,
  dir = shippedProbesDir,
  opts: { fingerprints?: boolean } = {},
) {
  const loaded: string[] = [];
  const fingerprints = opts.fingerprints ?? true;
  if (!fingerprints) {
    const removed = await deleteShippedFingerprintSamples(deps.database.db);
    if (removed.length > 0)
      deps.logger.info("shipped fingerprint samples removed (LINEWATCH_SHIPPED_FINGERPRINTS=false)", { samples: removed });
  }
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
    if (!fingerprints && s.expect.fingerprint) continue;
    const row = await upsertShippedSample(
      deps.database.db,
      { ...s, expect: s.expect as SampleExpect, timeoutMs: s.timeoutMs ?? null },
      new Date(deps.clock.now()),
    );
    if (row) loaded.push(row.name);
  }
  return loaded;
}
