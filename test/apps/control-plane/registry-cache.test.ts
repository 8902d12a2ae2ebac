import { randomBytes } from "node:crypto";
import { type Database, insertLine, insertRoute } from "@linewatch/db";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../../apps/control-plane/src/logger";
import { RegistryCache, type RegistrySnapshot } from "../../../apps/control-plane/src/registry-cache";
import { createSecretBox } from "../../../apps/control-plane/src/secrets";
import { ManualClock } from "../../helpers/manual-clock";
import { lineRow } from "../../helpers/rows";
import { createTestDatabase, type TestDatabase } from "../../helpers/test-db";

// The registry cache re-reads lines, samples and routes behind its snapshot every 10 s in case a
// replica's notification was lost. Reading and decrypting every line to find nothing changed cost
// the 1000-line control plane about a percent of a core (bench/probe-throughput); a fingerprint
// query answers that instead, and a whole reload still runs every 5 minutes.
let testDb: TestDatabase;
let database: Database;
let cache: RegistryCache;
const clock = new ManualClock();

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = await testDb.open();
  await insertRoute(database.db, { name: "chat", freeShareCap: 0.2, onAllDown: "fail-open", policy: null });
  await insertLine(database.db, lineRow("a"));
  cache = new RegistryCache({ database, clock, secrets: createSecretBox(randomBytes(32).toString("hex")), logger: silentLogger });
});

afterAll(async () => {
  await database?.close();
  await testDb?.dispose();
});

/** What an old snapshot becomes: still served at once by get(), then checked. */
async function checked(before: RegistrySnapshot): Promise<RegistrySnapshot> {
  expect(await cache.get()).toBe(before);
  return cache.check();
}

const names = (s: RegistrySnapshot) => [...s.lines.values()].map((l) => l.name).sort();

describe("RegistryCache", () => {
  it("keeps its snapshot (the same object) when the fingerprint says nothing changed", async () => {
    const first = await cache.get();
    expect(names(first)).toEqual(["a"]);
    clock.advance(11_000);
    expect(await checked(first)).toBe(first);
    expect(await cache.get()).toBe(first); // and it counts as fresh for another 10 s
  });

  it("reloads when a change made without a notification moves the fingerprint", async () => {
    const before = await cache.get();
    await insertLine(database.db, lineRow("b"));
    clock.advance(11_000);
    const after = await checked(before);
    expect(names(after)).toEqual(["a", "b"]);
    // A membership's weight alone moves it too.
    await database.db.execute(sql`update route_lines set weight = 20 where line_id = (select id from lines where name = 'a')`);
    clock.advance(11_000);
    const reweighted = await checked(after);
    expect([...reweighted.lines.values()].find((l) => l.name === "a")?.routes).toEqual([{ route: "chat", weight: 20 }]);
  });

  it("reloads whole every 5 minutes, even for a change the fingerprint cannot see", async () => {
    const before = await cache.get();
    // An edit outside the API that leaves updated_at alone.
    await database.db.execute(sql`update lines set model = 'edited' where name = 'a'`);
    clock.advance(11_000);
    expect(await checked(before)).toBe(before);
    clock.advance(5 * 60_000);
    const after = await checked(before);
    expect(after).not.toBe(before);
    expect([...after.lines.values()].find((l) => l.name === "a")?.model).toBe("edited");
  });
});
