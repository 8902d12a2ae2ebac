// The README's copy-paste webhook receiver is deploy/webhooks/receiver.mjs, byte for byte, so the
// code the e2e test runs against real deliveries (test/e2e/webhook-receiver.test.ts) is the code
// operators copy.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

describe("the README's webhook receiver", () => {
  it("is deploy/webhooks/receiver.mjs", () => {
    const readme = readFileSync(`${root}README.md`, "utf8");
    const alerts = readme.slice(readme.indexOf("\n## Alerts\n"));
    const block = /```js\n([\s\S]*?)```/.exec(alerts)?.[1];
    expect(block).toBeDefined();
    expect(block).toBe(readFileSync(`${root}deploy/webhooks/receiver.mjs`, "utf8"));
  });
});
