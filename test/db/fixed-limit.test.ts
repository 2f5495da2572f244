import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { fixedLimit } from "../../src/db/fixed-limit";
import { counterparties, invoices } from "../../src/db/schema";
import { makeCounterparty, makeTenant, shardD1 } from "../helpers/api";

// A LIMIT bound as a parameter makes SQLite compile the statement again on each run with new
// bindings; fixedLimit writes it into the statement's text instead.
describe("fixedLimit", () => {
  const db = createDb(env.SHARD_A!);

  it.each([0, 1, 101, 1001, 60_000])("writes limit %d into the statement, not as a bound value", (n) => {
    const query = db.select({ id: invoices.id }).from(invoices).limit(fixedLimit(n)).toSQL();
    expect(query.sql).toMatch(new RegExp(`limit ${n}$`));
    expect(query.params).not.toContain(n);
  });

  it("limits the rows read", async () => {
    const { client } = await makeTenant();
    for (let i = 0; i < 3; i++) await makeCounterparty(client, "buyer");
    const db = createDb(await shardD1(client.accountId));
    for (const n of [0, 1, 2]) expect(await db.select({ id: counterparties.id }).from(counterparties).limit(fixedLimit(n))).toHaveLength(n);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])("refuses %d", (n) => {
    expect(() => fixedLimit(n)).toThrow(RangeError);
  });
});
