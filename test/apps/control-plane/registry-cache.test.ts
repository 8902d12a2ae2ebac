import { randomBytes } from "node:crypto";
import { type Database, deleteLine, insertLine, insertRoute, updateLine } from "@linewatch/db";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../../apps/control-plane/src/logger";
import { parseRegistryChange, RegistryCache, type RegistrySnapshot } from "../../../apps/control-plane/src/registry-cache";
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

  it("after a change that names its routes, reads again only their lines and keeps the other lines' objects", async () => {
    await insertRoute(database.db, { name: "other", freeShareCap: 0.2, onAllDown: "fail-open", policy: null });
    const o1 = await insertLine(database.db, lineRow("o1", { routes: [{ route: "other", weight: 5 }] }));
    const o2 = await insertLine(database.db, lineRow("o2", { routes: [{ route: "other", weight: 5 }] }));
    cache.invalidate();
    const before = await cache.get();
    const a = [...before.lines.values()].find((l) => l.name === "a");
    // An edit of a line on "chat" that no notification names: a change naming "other" does not read it.
    await database.db.execute(sql`update lines set model = 'unseen' where name = 'a'`);
    // Through "the API": o1 reweighted, o2 moved to "chat", a new line on "other", then "other" named.
    await updateLine(database.db, o1.id, { routes: [{ route: "other", weight: 7 }] }, new Date());
    await updateLine(database.db, o2.id, { routes: [{ route: "chat", weight: 3 }] }, new Date());
    await insertLine(database.db, lineRow("o0", { routes: [{ route: "other", weight: 1 }] }));
    cache.invalidate({ routes: ["other"] });
    const after = await cache.get();
    expect(after).not.toBe(before);
    const byName = new Map([...after.lines.values()].map((l) => [l.name, l]));
    expect(byName.get("a")).toBe(a); // not on "other": the same object, not read again
    expect(byName.get("a")?.model).not.toBe("unseen");
    expect(byName.get("o1")?.routes).toEqual([{ route: "other", weight: 7 }]);
    expect(byName.get("o2")?.routes).toEqual([{ route: "chat", weight: 3 }]);
    expect(byName.get("o0")?.routes).toEqual([{ route: "other", weight: 1 }]);
    // Listed by name, as a whole load lists them.
    expect([...after.lines.values()].map((l) => l.name)).toEqual([...after.lines.values()].map((l) => l.name).sort());
    // A deleted line goes; a change naming no route (a line on none) reads everything, "a"'s edit too.
    await deleteLine(database.db, o1.id);
    cache.invalidate({ routes: ["other"] });
    expect(names(await cache.get())).not.toContain("o1");
    cache.invalidate({ routes: [] });
    const whole = await cache.get();
    expect([...whole.lines.values()].find((l) => l.name === "a")?.model).toBe("unseen");
    // Lines whose rows did not change keep their objects across a whole reload too.
    expect([...whole.lines.values()].find((l) => l.name === "o2")).toBe(byName.get("o2"));
  });

  it("a whole reload with a snapshot held re-reads only the rows whose version moved, and sees every edit", async () => {
    const secrets = createSecretBox(randomBytes(32).toString("hex"));
    const own = new RegistryCache({ database, clock, secrets, logger: silentLogger });
    await insertLine(database.db, lineRow("k1", { apiKeyEnc: secrets.encrypt("sk-one"), headers: { "x-h": true } }));
    await insertLine(database.db, lineRow("k3", { apiKeyEnc: secrets.encrypt("sk-three") }));
    const before = await own.get();
    const line = (s: RegistrySnapshot, name: string) => [...s.lines.values()].find((l) => l.name === name);
    // Outside the API (a whole reload is what such an edit gets): every weight, one key, one deletion,
    // one new line, one write that changes nothing.
    await database.db.execute(sql`update route_lines set weight = weight + 1`);
    await database.db.execute(sql`update lines set api_key_enc = ${secrets.encrypt("sk-three-new")} where name = 'k3'`);
    await database.db.execute(sql`delete from lines where name = 'o2'`);
    await database.db.execute(
      sql`insert into lines (name, tier, protocol, base_url, model) values ('k2', 'paid', 'openai-chat', 'http://x/v1', 'm')`,
    );
    await database.db.execute(sql`update lines set model = model where name = 'a'`);
    own.invalidate();
    const after = await own.get();
    expect([...after.lines.values()].map((l) => l.name)).toEqual(names(after));
    expect(names(after)).toEqual([...names(before).filter((n) => n !== "o2"), "k2"].sort());
    for (const l of before.lines.values()) {
      const now = line(after, l.name);
      if (l.name === "o2") expect(now).toBeUndefined();
      else expect(now?.routes).toEqual(l.routes.map((m) => ({ route: m.route, weight: m.weight + 1 })));
    }
    // Reweighted only: the same key and headers (objects the publisher keys its caches on).
    expect(line(after, "k1")?.apiKey).toBe("sk-one");
    expect(line(after, "k1")?.headers).toBe(line(before, "k1")?.headers);
    expect(line(after, "k3")?.apiKey).toBe("sk-three-new");
    expect(line(after, "k2")).toMatchObject({ baseUrl: "http://x/v1", routes: [] });
    expect(line(after, "a")?.model).toBe(line(before, "a")?.model);
    // Nothing moved since: every line is the same object.
    own.invalidate();
    const again = await own.get();
    for (const l of again.lines.values()) expect(l).toBe(after.lines.get(l.id));
    // And the whole read every 5 minutes, which trusts no version, agrees.
    clock.advance(5 * 60_000 + 1);
    own.invalidate();
    const whole = await own.get();
    for (const l of whole.lines.values()) expect(l).toBe(after.lines.get(l.id));
  });

  it("reads the routes a notification names, and everything for an empty or foreign payload", () => {
    expect(parseRegistryChange(JSON.stringify({ routes: ["chat", "other"] }))).toEqual({ routes: ["chat", "other"] });
    expect(parseRegistryChange("")).toBe("all");
    expect(parseRegistryChange("{not json")).toBe("all");
    expect(parseRegistryChange(JSON.stringify({ routes: [1] }))).toBe("all");
  });
});
