import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { equalsLiteral } from "../../src/db/literal";
import { deliveryStatusIs, webhookDeliveries } from "../../src/db/schema";
import { aliased } from "../../src/db/aliased";
import { sqliteTable, text } from "drizzle-orm/sqlite-core";

// A status bound as a parameter, where a partial index's condition names the column, makes SQLite
// prepare the statement again once bound; equalsLiteral writes it into the statement's text.
describe("equalsLiteral", () => {
  const db = createDb(env.SHARD_A!);

  it.each(["pending", "held", "failed"] as const)("writes status %s into the statement, not as a bound value", (status) => {
    const query = db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(deliveryStatusIs(status)).toSQL();
    expect(query.sql).toContain(`"webhook_deliveries"."status" = '${status}'`);
    expect(query.params).not.toContain(status);
  });

  it("names an alias's column", () => {
    const d = aliased(webhookDeliveries, "d");
    const query = db.select({ id: d.id }).from(d.from).where(deliveryStatusIs("pending", d)).toSQL();
    expect(query.sql).toContain(`"d"."status" = 'pending'`);
  });

  it("finds the rows the value names", async () => {
    const probe = sqliteTable("literal_probe", { status: text("status") });
    await env.SHARD_A!.exec("create table if not exists literal_probe (status text)");
    await db.insert(probe).values([{ status: "running" }, { status: "done" }, { status: "running" }]);
    expect(await db.select().from(probe).where(equalsLiteral(probe.status, "running"))).toEqual([{ status: "running" }, { status: "running" }]);
  });

  it.each(["", "Pending", "x'; drop table payments; --", "a b", "pending\n"])("refuses %j", (value) => {
    expect(() => equalsLiteral(webhookDeliveries.status, value)).toThrow(RangeError);
  });
});
