import { describe, expect, it } from "vitest";
import { env } from "cloudflare:test";
import { countingD1, serverTiming, writtenTable } from "../../src/db/counting-d1";

describe("the D1 tally behind SERVER_TIMING", () => {
  it.each([
    ['insert into "payments" ("id") values (?)', "payments"],
    ["INSERT OR IGNORE INTO time_counts select 1", "time_counts"],
    ['insert into "time_counts" select a, k from (select 1) where 1 on conflict do update set n = n + 1', "time_counts"],
    ['update "webhook_subscriptions" set "x" = ?', "webhook_subscriptions"],
    ["update or ignore list_counts set n = n + 1", "list_counts"],
    ['delete from "webhook_attempts" where 1', "webhook_attempts"],
    ["  \n insert into `payment_events` values (1)", "payment_events"],
    ['select * from "payments"', "other"],
    ["with x as (select 1) insert into payments select * from x", "other"],
  ])("names the table %j writes: %s", (query, table) => {
    expect(writtenTable(query)).toBe(table);
  });

  it("adds up the rows each table's statements wrote, in a batch and alone, and says so in Server-Timing", async () => {
    const d1 = env.SHARD_A!;
    await d1.exec("create table tally_probe (id integer primary key, name text unique)");
    try {
      const { db, tally } = countingD1(d1);
      await db.batch([
        db.prepare("insert into tally_probe (name) values (?)").bind(crypto.randomUUID()),
        db.prepare("insert into tally_probe (name) values (?)").bind(crypto.randomUUID()),
      ]);
      await db.prepare("delete from tally_probe").run();
      expect(tally.writtenByTable.tally_probe).toBe(tally.rowsWritten);
      expect(tally.rowsWritten).toBeGreaterThanOrEqual(4); // two rows, each with its unique index entry
      expect(serverTiming(tally)).toContain(`d1-written-by-table;desc="tally_probe:${tally.rowsWritten}"`);
    } finally {
      await d1.exec("drop table tally_probe");
    }
  });
});
