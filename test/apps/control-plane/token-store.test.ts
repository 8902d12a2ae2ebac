// The token cache under a crowd (issue 28): after a restart, or each time the cache expires, thousands
// of table polls arrive at once; they share one read of the tokens instead of sending one each, and
// a token created while a read is on its way is not lost to it.
import { type Database, insertToken } from "@linewatch/db";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { hashToken, TokenStore } from "../../../apps/control-plane/src/auth";
import type { AppDeps } from "../../../apps/control-plane/src/deps";
import { ManualClock } from "../../helpers/manual-clock";
import { createTestDatabase, type TestDatabase } from "../../helpers/test-db";

let testDb: TestDatabase;
let database: Database;
let clock: ManualClock;
let store: TokenStore;

beforeEach(async () => {
  testDb = await createTestDatabase();
  database = await testDb.open();
  clock = new ManualClock();
  store = new TokenStore({ database, clock, config: { metricsPublic: true } as AppDeps["config"] }, 5_000);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await database.close();
  await testDb.dispose();
});

const addToken = (name: string, role: string, token: string) =>
  insertToken(database.db, { name, role, hash: hashToken(token).toString("hex") });

describe("TokenStore", () => {
  it("reads the tokens once for a crowd of requests, cold and after each expiry", async () => {
    await addToken("r1", "router", "lw_router_one");
    const reads = vi.spyOn(database.db, "select");
    expect(store.authenticateNow("lw_router_one")).toBeUndefined(); // cold: it must be read first
    const crowd = await Promise.all(Array.from({ length: 500 }, (_, i) => store.authenticate(i % 2 ? "lw_router_one" : "lw_nobody")));
    expect(crowd.filter((r) => r?.name === "r1")).toHaveLength(250);
    expect(crowd.filter((r) => r === null)).toHaveLength(250);
    expect(reads).toHaveBeenCalledTimes(1);
    // Fresh: answered in the same turn, no read.
    expect(store.authenticateNow("lw_router_one")?.role).toBe("router");
    expect(store.authenticateNow("lw_nobody")).toBeNull();
    expect(store.isOpenNow()).toBe(false);
    expect(reads).toHaveBeenCalledTimes(1);
    clock.advance(5_001);
    expect(store.authenticateNow("lw_router_one")).toBeUndefined();
    await Promise.all(Array.from({ length: 500 }, () => store.authenticate("lw_router_one")));
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it("does not keep a read that began before a token was created", async () => {
    await addToken("r1", "router", "lw_router_one");
    const inFlight = store.authenticate("lw_router_one");
    await addToken("r2", "router", "lw_router_two");
    store.invalidate(); // what the token service does after creating one
    expect((await store.authenticate("lw_router_two"))?.name).toBe("r2");
    expect((await inFlight)?.name).toBe("r1");
    expect(store.authenticateNow("lw_router_two")?.name).toBe("r2");
  });
});
