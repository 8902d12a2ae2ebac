// The table's wire type is declared once (core's RouteTable). The API describes it with a zod schema
// and the router-client checks it with its own parser; these tests hold the three to one shape: at
// the type level (checked by `npm run typecheck`, which covers test/) and on sample answers.
import type { z } from "@hono/zod-openapi";
import { type TableListSchema, TableSchema } from "@linewatch/contract";
import type { RouteTable, RouteTableList } from "@linewatch/core";
import { type RouteTable as ClientRouteTable, parseTable } from "@linewatch/router-client";
import { describe, expect, expectTypeOf, it } from "vitest";

type Parsed = Extract<ReturnType<typeof parseTable>, { ok: true }>["value"];

describe("the table wire type", () => {
  it("is one type: what the API's schema describes is what the router-client's parser yields", () => {
    expectTypeOf<z.infer<typeof TableSchema>>().toEqualTypeOf<RouteTable>();
    expectTypeOf<z.infer<typeof TableListSchema>>().toEqualTypeOf<RouteTableList>();
    expectTypeOf<Parsed>().toEqualTypeOf<z.infer<typeof TableSchema>>();
    expectTypeOf<ClientRouteTable>().toEqualTypeOf<RouteTable>();
    expectTypeOf(parseTable).parameter(0).toEqualTypeOf<unknown>();
  });

  const line = {
    id: "l1",
    name: "paid-a",
    tier: "paid",
    state: "healthy",
    weight: 10000,
    protocol: "openai-chat",
    baseUrl: "http://u/v1",
    model: "m",
  };
  const table = { route: "chat", version: 3, generatedAt: "2026-12-02T00:00:00.000Z", mode: "normal", lines: [line] };

  it.each([
    ["a viewer's table (no credentials)", table],
    ["a router's table (key and headers)", { ...table, lines: [{ ...line, apiKey: "sk-1", headers: { "x-org": "o" } }] }],
    ["a line whose key is unset (null)", { ...table, lines: [{ ...line, apiKey: null, headers: {} }] }],
    ["an empty fail-closed table", { ...table, mode: "panic", lines: [] }],
  ])("both accept %s and read the same value", (_, answer) => {
    const schema = TableSchema.safeParse(answer);
    const parsed = parseTable(answer);
    expect(schema.success).toBe(true);
    expect(parsed).toEqual({ ok: true, value: schema.data });
  });

  it.each([
    ["a fractional weight", { ...table, lines: [{ ...line, weight: 0.5 }] }],
    ["a negative weight", { ...table, lines: [{ ...line, weight: -1 }] }],
    ["an unknown mode", { ...table, mode: "broken" }],
    ["a line without a name", { ...table, lines: [{ ...line, name: undefined }] }],
    ["a numeric header", { ...table, lines: [{ ...line, headers: { "x-n": 1 } }] }],
    ["an empty route name", { ...table, route: "" }],
    ["a version that is not an integer", { ...table, version: 1.5 }],
  ])("both refuse %s", (_, answer) => {
    expect(TableSchema.safeParse(answer).success).toBe(false);
    expect(parseTable(answer).ok).toBe(false);
  });
});
