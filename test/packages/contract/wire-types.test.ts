// One declaration per wire type (STYLE 12): where a producer and a consumer each hold a type, the
// contract's schema and the other side's type are checked to be the same (by `npm run typecheck`,
// which covers test/), and sample values are read alike.
import type { z } from "@hono/zod-openapi";
import {
  type OutcomeReportBody,
  OutcomeReportSchema,
  type ProbeResultResponse,
  type WebhookBody,
  WebhookBodySchema,
} from "@linewatch/contract";
import { type ProbeResult as CoreProbeResult, emptyCounts, type OutcomeReport, type WebhookJsonBody, webhookBody } from "@linewatch/core";
import type { OutcomeReport as RouterOutcomeReport } from "@linewatch/router-client";
import { describe, expect, expectTypeOf, it } from "vitest";

describe("the outcome report (routers → POST /v1/outcomes)", () => {
  it("is one type: what a router builds (core, router-client) is what the API's schema reads", () => {
    expectTypeOf<OutcomeReportBody>().toEqualTypeOf<OutcomeReport>();
    expectTypeOf<RouterOutcomeReport>().toEqualTypeOf<OutcomeReport>();
    expectTypeOf<z.input<typeof OutcomeReportSchema>>().toEqualTypeOf<OutcomeReport>();
  });

  it("reads a report a router builds as that same value", () => {
    const report: OutcomeReport = {
      routerId: "r-1",
      windowId: "w-1",
      windowStart: "2026-12-02T00:00:00.000Z",
      windowEnd: "2026-12-02T00:00:05.000Z",
      lines: [
        {
          lineId: "7e0d5a52-2f6b-4a4e-9a51-6f0c7f7f3b1a",
          counts: { ...emptyCounts(), ok: 3, cut: 1 },
          promptTokens: 12,
          completionTokens: 40,
          latencyMsSum: 900,
          ttfbMsSum: 300,
        },
      ],
    };
    expect(OutcomeReportSchema.parse(report)).toEqual(report);
  });
});

describe("a probe result (the prober's → GET /v1/lines/:id/health)", () => {
  it("carries what core's probe result holds, under the same names and types", () => {
    type Shared = Exclude<keyof CoreProbeResult, "lineId" | "startedAt" | "errorClass">;
    expectTypeOf<Pick<ProbeResultResponse, Shared>>().toEqualTypeOf<Pick<CoreProbeResult, Shared>>();
  });
});

describe("a webhook body (the control plane's deliveries → a receiver)", () => {
  it("is one type: what core builds is what /openapi.json documents (WebhookBody)", () => {
    expectTypeOf<WebhookBody>().toEqualTypeOf<WebhookJsonBody>();
  });

  it("parses a body core built as that same value", () => {
    const text = webhookBody("json", {
      deliveryId: "12-7e0d5a52-2f6b-4a4e-9a51-6f0c7f7f3b1a",
      kinds: ["fail_safe", "state_change"],
      event: {
        id: 12,
        at: Date.UTC(2026, 11, 2),
        kind: "state_change",
        lineId: "7e0d5a52-2f6b-4a4e-9a51-6f0c7f7f3b1a",
        route: null,
        reason: "fail_safe: 1 failing result(s) could not be applied",
        data: { line: "free-b", from: "healthy", to: "cooldown", probeIds: [] },
      },
      line: "free-b",
      routes: ["chat"],
    });
    const body = JSON.parse(text) as unknown;
    expect(WebhookBodySchema.parse(body)).toEqual(body);
  });
});
