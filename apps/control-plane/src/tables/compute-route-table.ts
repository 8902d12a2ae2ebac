import { createHash } from "node:crypto";
import { computeTable, type PublishedLine, type PublishedTable, type TableMember } from "@linewatch/core";
import type { CachedLine, CachedRoute } from "../registry-cache";
import type { LineTableStatus } from "./line-statuses";

/** A route's table as computed, before it is versioned. */
export interface ComputedRouteTable {
  route: string;
  mode: PublishedTable["mode"];
  lines: PublishedLine[];
}

/** By the headers object, which the registry keeps while a line's sealed headers stay the same (a reweighted line keeps it). */
const credentialRevs = new WeakMap<Record<string, string>, { apiKey: string | null; rev: string }>();

/** A revision of the line's key and headers (the table stores this, never the values). */
function credentialsRev(line: CachedLine): string {
  const held = credentialRevs.get(line.headers);
  if (held && held.apiKey === line.apiKey) return held.rev;
  const rev = createHash("sha256")
    .update(JSON.stringify([line.apiKey, line.headers]))
    .digest("hex")
    .slice(0, 16);
  credentialRevs.set(line.headers, { apiKey: line.apiKey, rev });
  return rev;
}

/** A route's table from its lines and their statuses (`statuses[i]` is `lines[i]`'s, as read under the route's lock). */
export function computeRouteTable(
  route: CachedRoute,
  lines: readonly CachedLine[],
  statuses: readonly LineTableStatus[],
): ComputedRouteTable {
  const members: TableMember[] = lines.map((l, i) => ({
    lineId: l.id,
    name: l.name,
    tier: l.tier,
    baseWeight: l.routes.find((m) => m.route === route.name)?.weight ?? 0,
    factor: statuses[i]?.factor ?? 0,
    maxShare: l.maxShare,
    adminState: l.adminState,
    protocol: l.protocol,
  }));
  const computed = computeTable({
    route: { name: route.name, freeShareCap: route.freeShareCap, onAllDown: route.onAllDown },
    members,
  });
  const byId = new Map(lines.map((l, i) => [l.id, { line: l, status: statuses[i] }]));
  return {
    route: route.name,
    mode: computed.mode,
    lines: computed.lines.map(({ lineId, weight }) => {
      const found = byId.get(lineId);
      if (!found) throw new Error(`computeTable returned line ${lineId}, which is not a member of route ${route.name}`);
      const l = found.line;
      return {
        lineId,
        id: lineId,
        weight,
        name: l.name,
        tier: l.tier,
        state: found.status?.state ?? l.adminState,
        protocol: l.protocol,
        baseUrl: l.baseUrl,
        model: l.model,
        credentials: credentialsRev(l),
      };
    }),
  };
}
