import { executeRows } from "@linewatch/db";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../../apps/control-plane/src/logger";
import type { RegistrySnapshot } from "../../../apps/control-plane/src/registry-cache";
import { TablePublisher } from "../../../apps/control-plane/src/tables/publisher";
import { createLine, createRoute } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { createTestDatabase } from "../../helpers/test-db";

// The publisher recomputes many routes in one transaction and reads stored tables through one parser
// (issue 16 item 2, issue 14 point 3). docs/api.md, docs/tables.md: versions only move when a table changed, and never repeat.
interface Table {
  route: string;
  version: number;
  lines: { id: string; name: string; weight: number }[];
}

let cp: TestControlPlane;
const table = async (route: string): Promise<Table> => (await (await cp.request(`/v1/tables/${route}`)).json()) as Table;
const publishEvents = async (route: string) =>
  ((await (await cp.request(`/v1/events?kind=table_published&route=${route}`)).json()) as { events: { data: { version: number } }[] })
    .events;

beforeAll(async () => {
  cp = await startTestControlPlane({ testDb: await createTestDatabase({ persistent: true }) });
  for (const route of ["r-a", "r-b", "r-c"]) await createRoute(cp, route);
  await createLine(cp, {
    name: "one",
    baseUrl: "http://127.0.0.1:9/v1",
    routes: [
      { route: "r-a", weight: 1 },
      { route: "r-b", weight: 1 },
    ],
  });
  await createLine(cp, {
    name: "two",
    baseUrl: "http://127.0.0.1:9/v1",
    routes: [
      { route: "r-a", weight: 3 },
      { route: "r-c", weight: 1 },
    ],
  });
});
afterAll(() => cp?.stop());

describe("table publisher", () => {
  it("recomputes several routes at once: a new version (and one event) only for the routes that changed", async () => {
    const before = await Promise.all(["r-a", "r-b", "r-c"].map(table));
    await cp.engine.publisher.recompute(["r-c", "r-a", "r-b", "r-a"]);
    expect((await Promise.all(["r-a", "r-b", "r-c"].map(table))).map((t) => t.version)).toEqual(before.map((t) => t.version));

    // r-a changes (line "one"'s weight) and r-c (line "one" joins it); r-b does not (one line: 10000 whatever its weight).
    const one = before[0]?.lines.find((l) => l.name === "one")?.id ?? "";
    const patch = await cp.request(`/v1/lines/${one}`, {
      method: "PATCH",
      json: {
        routes: [
          { route: "r-a", weight: 3 },
          { route: "r-b", weight: 5 },
          { route: "r-c", weight: 1 },
        ],
      },
    });
    expect(patch.status).toBe(200);
    await cp.engine.publisher.recompute(["r-a", "r-b", "r-c"]);
    const after = await Promise.all(["r-a", "r-b", "r-c"].map(table));
    expect(after.map((t) => t.version)).toEqual(before.map((t, i) => t.version + (i === 1 ? 0 : 1)));
    expect(after[2]?.lines.map((l) => [l.name, l.weight])).toEqual([
      ["one", 5000],
      ["two", 5000],
    ]);
    for (const [i, route] of ["r-a", "r-b", "r-c"].entries()) {
      const versions = (await publishEvents(route)).map((e) => e.data.version);
      expect(new Set(versions).size, route).toBe(versions.length);
      expect(Math.max(...versions), route).toBe(after[i]?.version);
    }
  });

  it("continues the version of a stored table it cannot read, and serves the table again", async () => {
    const before = await table("r-a");
    // A row as another version of linewatch might have left it: lines in a shape this one does not write.
    await cp.database.db.execute(sql`update published_tables set lines = '[{"line": "x"}]'::jsonb where route_name = 'r-a'`);
    cp = await cp.restart();
    const res = await cp.request("/v1/tables/r-a");
    expect(res.status, await res.clone().text()).toBe(200);
    const after = (await res.json()) as Table;
    expect(after.version).toBe(before.version + 1);
    expect(after.lines).toEqual(before.lines);
  });

  it("stores lines without lineId, and reads rows of both shapes as the same table (no new version)", async () => {
    const storedLines = async (route: string) =>
      executeRows<{ lines: Record<string, unknown>[] }>(
        await cp.database.db.execute(sql`select lines from published_tables where route_name = ${route}`),
      )[0]?.lines ?? [];
    const lines = await storedLines("r-b");
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) {
      expect(l).not.toHaveProperty("lineId");
      expect(typeof l.id).toBe("string");
    }
    const res = await cp.request("/v1/tables/r-b");
    const body = await res.text();
    const etag = res.headers.get("etag");
    // The shape the version before wrote (lineId and id), as a replica of it may still write it.
    await cp.database.db.execute(
      sql`update published_tables set lines = (select jsonb_agg(l || jsonb_build_object('lineId', l->'id')) from jsonb_array_elements(lines) l) where route_name = 'r-b'`,
    );
    expect((await storedLines("r-b"))[0]).toHaveProperty("lineId");
    cp = await cp.restart();
    const again = await cp.request("/v1/tables/r-b");
    expect(await again.text()).toBe(body);
    expect(again.headers.get("etag")).toBe(etag);
    await cp.engine.publisher.recompute(["r-b"]);
    const after = await cp.request("/v1/tables/r-b");
    expect(await after.text()).toBe(body);
    expect(after.headers.get("etag")).toBe(etag);
  });

  it("keeps its per-route index across changes that name their routes as if it were built again", async () => {
    // Each API change reloads only the routes it names, and the publisher lists again only the routes
    // whose lines changed; what it holds must be what a publisher starting from scratch works out.
    type Index = { linesOf: Map<string, { name: string }[]>; policyOf: Map<string, unknown> };
    const indexOf = (p: TablePublisher, snapshot: RegistrySnapshot): Index => p.index.of(snapshot);
    const summary = (index: Index) => ({
      routes: Object.fromEntries([...index.linesOf].map(([route, lines]) => [route, lines.map((l) => l.name)]).sort()),
      policies: [...index.policyOf].map(([id, policy]) => [id, JSON.stringify(policy)]).sort(),
    });
    const held = cp.engine.publisher;
    indexOf(held, await cp.engine.registry.get());
    await createRoute(cp, "r-d");
    const three = await createLine(cp, { name: "three", baseUrl: "http://127.0.0.1:9/v1", routes: [{ route: "r-d", weight: 2 }] });
    const four = await createLine(cp, { name: "four", baseUrl: "http://127.0.0.1:9/v1", routes: [{ route: "r-c", weight: 2 }] });
    expect((await cp.request(`/v1/lines/${three.id}`, { method: "PATCH", json: { routes: [{ route: "r-b", weight: 4 }] } })).status).toBe(
      200,
    );
    expect((await cp.request(`/v1/lines/${four.id}`, { method: "DELETE" })).status).toBe(204);
    for (const step of ["after the line changes", "after a route's policy changed"]) {
      const snapshot = await cp.engine.registry.get();
      const fresh = new TablePublisher(
        { database: cp.database, clock: { now: () => Date.now() }, logger: silentLogger },
        cp.engine.registry,
      );
      expect(summary(indexOf(held, snapshot)), step).toEqual(summary(indexOf(fresh, snapshot)));
      expect(
        indexOf(held, snapshot)
          .linesOf.get("r-b")
          ?.map((l) => l.name),
        step,
      ).toEqual(["one", "three"]);
      const policy = await cp.request("/v1/routes/r-b", { method: "PATCH", json: { policy: { failCount: 4 } } });
      expect(policy.status, await policy.clone().text()).toBe(200);
    }
  });
});
