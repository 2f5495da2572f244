import { env } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { integer, sqliteTable } from "drizzle-orm/sqlite-core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDb, runNamedBatch } from "../../src/db/client";

const probe = sqliteTable("named_batch_probe", { n: integer("n").primaryKey() });
const db = createDb(env.DB);

describe("runNamedBatch", () => {
  beforeEach(async () => {
    await db.run(sql`create table named_batch_probe (n integer primary key)`);
    await db.insert(probe).values([1, 2, 3, 4, 5].map((n) => ({ n })));
  });
  afterEach(async () => {
    await db.run(sql`drop table named_batch_probe`);
  });

  it("answers each named statement's result by its name, a list for a list, in the order named", async () => {
    const row = (n: number) => db.select().from(probe).where(eq(probe.n, n));
    const results = await runNamedBatch(db, { first: row(1), none: [], several: [row(2), row(3), row(4)], last: row(5) });
    expect(results).toEqual({ first: [{ n: 1 }], none: [], several: [[{ n: 2 }], [{ n: 3 }], [{ n: 4 }]], last: [{ n: 5 }] });
  });

  it("runs all its statements or none", async () => {
    const batch = runNamedBatch(db, { kept: db.insert(probe).values({ n: 6 }), refused: [db.insert(probe).values({ n: 1 })] });
    await expect(batch).rejects.toThrow();
    expect(await db.select().from(probe).where(eq(probe.n, 6))).toEqual([]);
  });
});
