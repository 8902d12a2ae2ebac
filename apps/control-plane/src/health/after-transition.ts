import { weightFactor } from "@linewatch/core";
import { expediteProbe, setFastProbing } from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { RegistrySnapshot } from "../registry-cache";
import type { PublishCause } from "../tables/publisher";
import type { Moved } from "./apply-events";
import type { LinePolicies } from "./line-policies";

/** What acting on a written transition's effects needs. */
export interface FollowUpParts {
  deps: Pick<AppDeps, "database" | "clock">;
  registry: { get(): Promise<RegistrySnapshot> };
  policies: LinePolicies;
  publisher: { recompute(routes: Iterable<string>, cause: PublishCause): Promise<void> };
}

/** The effects that are not rows: confirming probes, fast probing, and a republish when the line's weight or state moved. */
export async function afterTransition(parts: FollowUpParts, { line, before, health, effects }: Moved): Promise<void> {
  const db = parts.deps.database.db;
  for (const e of effects) {
    if (e.kind === "reprobe") await expediteProbe(db, line.id, e.sampleId, new Date(e.at), "confirm");
    if (e.kind === "fast_probe_until") {
      const { fastIntervalMs } = parts.policies.of(await parts.registry.get(), line);
      // Pending probes come forward to their own slots at the fast interval (each keeps its phase).
      const now = new Date(parts.deps.clock.now());
      if (fastIntervalMs !== undefined) await setFastProbing(db, line.id, new Date(e.until), now, fastIntervalMs);
    }
  }
  const moved = weightFactor(before) !== weightFactor(health) || before.phase.state !== health.phase.state;
  if (!moved) return;
  const cause = effects.find((e) => e.kind === "weight_change" || e.kind === "state_change");
  await parts.publisher.recompute(
    line.routes.map((r) => r.route),
    cause && "reason" in cause
      ? { reason: `${line.name}: ${cause.reason}`, probeIds: cause.probeIds }
      : { reason: `${line.name}: health`, probeIds: [] },
  );
}
