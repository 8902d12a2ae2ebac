// The README's webhook receiver (deploy/webhooks/receiver.mjs), run as its own process against real
// deliveries of a control plane: it accepts what linewatch signs, handles a delivery once however
// often it arrives, and refuses a wrong signature, an old timestamp and an unsigned request.
import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRoute, eventually } from "../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../helpers/control-plane";

const SECRET = "whsec-readme-0123456789abcdef";
const script = fileURLToPath(new URL("../../deploy/webhooks/receiver.mjs", import.meta.url));
let cp: TestControlPlane;
let child: ChildProcess;
let out = "";
let url = "";

beforeAll(async () => {
  child = spawn(process.execPath, [script], { env: { PATH: process.env.PATH ?? "", LINEWATCH_WEBHOOK_SECRET: SECRET, PORT: "0" } });
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  const port = await eventually(async () => /listening on (\d+)/.exec(out)?.[1], 10_000);
  url = `http://127.0.0.1:${port}/hook`;
  cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" } });
  await createRoute(cp, "chat");
}, 60_000);

afterAll(async () => {
  child?.kill();
  await cp?.stop();
  await cp?.testDb.dispose();
});

const post = (body: string, headers: Record<string, string>) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

describe("deploy/webhooks/receiver.mjs", () => {
  it("accepts linewatch's signed deliveries, each once, and refuses forged, replayed and unsigned ones", async () => {
    const sink = (await (
      await cp.request("/v1/webhooks", { method: "POST", json: { name: "readme", url, secret: SECRET, events: ["state_change"] } })
    ).json()) as { id: string };
    expect((await (await cp.request(`/v1/webhooks/${sink.id}/test`, { method: "POST" })).json()) as unknown).toMatchObject({
      ok: true,
      status: 204,
    });
    const line = (await (
      await cp.request("/v1/lines", {
        method: "POST",
        json: {
          name: "l",
          tier: "paid",
          protocol: "openai-chat",
          model: "m",
          baseUrl: "http://127.0.0.1:9/v1",
          routes: [{ route: "chat", weight: 1 }],
        },
      })
    ).json()) as { id: string };
    for (const adminState of ["drained", "active", "drained"]) {
      await cp.request(`/v1/lines/${line.id}`, { method: "PATCH", json: { adminState } });
    }
    await cp.engine.webhooks.runOnce();
    const delivered = await eventually(async () => {
      const s = (await (await cp.request(`/v1/webhooks/${sink.id}`)).json()) as { delivery: { delivered: number; pending: number } };
      return s.delivery.pending === 0 && s.delivery.delivered >= 2 ? s.delivery.delivered : undefined;
    });
    await eventually(async () => out.split("\n").filter((l) => l.startsWith("state_change ")).length === delivered);
    expect(out).toMatch(/^test test-\d+-[0-9a-f-]+: test: a test delivery to webhook readme$/m);
    expect(out).toMatch(/^state_change \d+-[0-9a-f-]+: line l: (unprobed|drained) → (drained|unprobed) \(admin: /m);

    // A delivery that arrives again (its answer lost) is answered, not handled twice.
    const body = JSON.stringify({ id: "x", kinds: ["state_change"], summary: "again", event: {} });
    const ts = Math.floor(Date.now() / 1000);
    const sign = (t: number, b: string, key = SECRET) => `v1=${createHmac("sha256", key).update(`${t}.${b}`).digest("hex")}`;
    const headers = (t: number, b: string, key?: string) => ({
      "x-linewatch-timestamp": String(t),
      "x-linewatch-signature": sign(t, b, key),
      "x-linewatch-delivery": "1-again",
      "x-linewatch-event": "state_change",
    });
    expect((await post(body, headers(ts, body))).status).toBe(204);
    expect((await post(body, headers(ts, body))).status).toBe(204);
    expect(out.split("\n").filter((l) => l.includes("1-again"))).toHaveLength(1);
    // Forged, replayed, tampered, unsigned.
    const refused = [
      await post(body, headers(ts, body, "another-secret-0000")),
      await post(body, headers(ts - 301, body)),
      await post(`${body} `, headers(ts, body)),
      await post(body, {}),
    ];
    expect(await Promise.all(refused.map(async (r) => `${r.status} ${await r.text()}`))).toEqual([
      "401 bad signature",
      "401 timestamp out of tolerance",
      "401 bad signature",
      "401 no timestamp",
    ]);
  });
});
