import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { fixedLimit } from "../../src/db/fixed-limit";
import { invoices } from "../../src/db/schema";

// A LIMIT bound as a parameter makes SQLite compile the statement again on each run with new
// bindings; fixedLimit writes it into the statement's text instead.
describe("fixedLimit", () => {
  const db = createDb(env.DB);

  it.each([0, 1, 101, 1001, 60_000])("writes limit %d into the statement, not as a bound value", (n) => {
    const query = db.select({ id: invoices.id }).from(invoices).limit(fixedLimit(n)).toSQL();
    expect(query.sql).toMatch(new RegExp(`limit ${n}$`));
    expect(query.params).not.toContain(n);
  });

  it("limits the rows read", async () => {
    const rows = await db.select({ n: invoices.id }).from(invoices).limit(fixedLimit(0));
    expect(rows).toEqual([]);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])("refuses %d", (n) => {
    expect(() => fixedLimit(n)).toThrow(RangeError);
  });
});
