import type { LiveEvidence } from "@linewatch/core";
import { getLineHealth } from "@linewatch/db";
import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLine, createRoute } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";

// The health service's side of live evidence (docs/live-evidence.md): every router report judges every line it
// touched, so a clean judgment of a line with no suspect spell must cost no write.
let cp: TestControlPlane;
let lab: Lab;
let lineId: string;

const evidence = (suspect: boolean): LiveEvidence =>
  ({
    lineId,
    at: Date.now(),
    summary: {},
    verdict: suspect ? { suspect, signal: "silent", reason: "6 empty of 100 answers (6%)" } : { suspect, reason: "ok" },
    probes: [],
  }) as unknown as LiveEvidence;
const row = async () => {
  const r = await getLineHealth(cp.database.db, lineId);
  if (!r?.health) throw new Error("no health row");
  return { revision: r.revision, suspectSince: r.health.liveSuspectSince };
};

beforeAll(async () => {
  lab = await startLab({ lines: [{ name: "a", baseLatencyMs: 2 }] });
  cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" } });
  await createRoute(cp, "chat");
  lineId = (await createLine(cp, { name: "a", baseUrl: lab.baseUrl("a"), routes: [{ route: "chat", weight: 100 }] })).id;
  await cp.engine.health.applyLive(lineId, evidence(false)); // creates the health row
}, 60_000);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

describe("live judgments in the health service", () => {
  it("a clean judgment of a line with no suspect spell writes nothing", async () => {
    const before = await row();
    expect(before.suspectSince).toBeNull();
    for (let i = 0; i < 3; i++) await cp.engine.health.applyLive(lineId, evidence(false));
    expect(await row()).toEqual(before);
  });

  it("a suspect judgment starts a spell and the next clean one ends it", async () => {
    const before = await row();
    await cp.engine.health.applyLive(lineId, evidence(true));
    const suspect = await row();
    expect(suspect.suspectSince).toEqual(expect.any(Number));
    expect(suspect.revision).toBe(before.revision + 1);
    await cp.engine.health.applyLive(lineId, evidence(false));
    expect(await row()).toEqual({ revision: before.revision + 2, suspectSince: null });
  });
});
