import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { uuidSql } from "../../src/db/uuid-sql";

// A delivery's id is made in the statement that inserts it (webhooks/outbox/outbox.ts); the
// interface says it is a UUID (docs/interface.md), the same as `crypto.randomUUID()` makes.
const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("uuidSql", () => {
  it("makes a different version 4 UUID for each row, with every variant digit", async () => {
    const db = createDb(env.DB);
    const rows = await db.all<{ id: string }>(
      sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 2000) select ${uuidSql()} as id from n`,
    );
    const ids = rows.map((row) => row.id);
    expect(ids).toHaveLength(2000);
    expect(ids.filter((id) => !V4.test(id))).toEqual([]);
    expect(new Set(ids).size).toBe(2000);
    expect(new Set(ids.map((id) => id[19])).size).toBe(4);
  });
});
