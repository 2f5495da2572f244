import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { copyChunk, COPY_CHUNK, COPY_READ_BYTES, type CopyCursor } from "../../src/services/moves/copy";
import { MOVED_TABLES } from "../../src/services/moves/tables";
import { call, makePayment, makeTenant } from "../helpers/api";
import { receivedAt, secondAttempt, subscribeToReceiver, waitFor } from "../helpers/webhooks";
import { endedDelivery } from "../helpers/large-rows";

/** The tables keyed WITHOUT ROWID (migrations/README.md). */
const WITHOUT_ROWID = ["payment_events", "payment_invoices", "webhook_deliveries", "webhook_attempts", "list_counts", "time_counts"];

/** Every row of the account in a table, in key order. */
async function rowsOf(d1: D1Database, table: (typeof MOVED_TABLES)[number], accountId: string) {
  const { results } = await d1
    .prepare(`select * from "${table.name}" where ${table.rows} order by ${table.key.map((k) => `"${k}"`).join(", ")}`)
    .bind(accountId)
    .all();
  return results;
}

describe("the bulk copy of a move", () => {
  it("walks WITHOUT ROWID tables in key order across many chunks and rowid tables up to their mark, copying every row once as it is", async () => {
    const { client, processor } = await makeTenant({ shard: "A" });
    const { subscription, box } = await subscribeToReceiver(client, { payment_events: true });
    const { payment } = await makePayment(client);
    expect(
      (
        await call("POST", `/v2/payments/${payment.id}/events/`, {
          body: { event_code: "PU10", description: "Sent", status: "in-progress" },
          headers: processor.headers,
        })
      ).status,
    ).toBe(201);
    await waitFor(
      () => receivedAt(box),
      (received) => received.length === 2,
    );
    await secondAttempt(client, subscription.id, box);
    const a = env.SHARD_A!;
    // More events and deliveries than several chunks hold (rows only: the copy reads rows, not the API).
    const extra = COPY_CHUNK * 2 + 37;
    await a
      .prepare(
        `insert into payment_events (id, payment_id, seq, event_code, status, description, created_at)
         with recursive n(i) as (select 3 union all select i + 1 from n where i < ?2 + 2)
         select 'pev_copy' || i, ?1, i, 'PU15', 'in-progress', 'note ' || i, 1000 + i from n`,
      )
      .bind(payment.id, extra)
      .run();
    await a
      .prepare(
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, content_type, status, attempts, created_at, updated_at, test)
         with recursive n(i) as (select 1 union all select i + 1 from n where i < ?3)
         select 'copy-' || i, ?1, ?2, 'pmt_none', '{}', 'application/json', 'succeeded', 1, 1000 + (i % 7), 1000, 0 from n`,
      )
      .bind(subscription.id, client.accountId, extra)
      .run();

    const b = env.SHARD_B!;
    let chunks = 0;
    for (const table of MOVED_TABLES) {
      const upTo = table.withoutRowid ? 0 : Number((await a.prepare(`select coalesce(max(rowid), 0) as n from "${table.name}"`).first<{ n: number }>())!.n);
      let after: CopyCursor = 0;
      for (;;) {
        const chunk = await copyChunk(a, b, table, client.accountId, after, upTo);
        if (chunk.last === null) break;
        expect(chunk.copied).toBeLessThanOrEqual(COPY_CHUNK);
        after = chunk.last;
        chunks++;
      }
    }
    for (const table of MOVED_TABLES) expect(await rowsOf(b, table, client.accountId), table.name).toEqual(await rowsOf(a, table, client.accountId));
    expect(
      (
        await rowsOf(
          b,
          MOVED_TABLES.find((t) => t.name === "payment_events")!,
          client.accountId,
        )
      ).length,
    ).toBe(extra + 2);
    expect(
      (
        await rowsOf(
          b,
          MOVED_TABLES.find((t) => t.name === "webhook_attempts")!,
          client.accountId,
        )
      ).length,
    ).toBe(1);
    expect(chunks).toBeGreaterThan(2 * 3);
  });

  it("keeps the tables that name no rowid WITHOUT ROWID on every shard (drizzle-kit cannot say so; a regenerated table would lose it)", async () => {
    for (const shard of [env.SHARD_A!, env.SHARD_B!]) {
      for (const name of WITHOUT_ROWID) {
        const row = await shard.prepare("select sql from sqlite_master where type = 'table' and name = ?").bind(name).first<{ sql: string }>();
        expect(row!.sql, name).toMatch(/\)\s*WITHOUT ROWID$/);
      }
    }
    expect(
      MOVED_TABLES.filter((table) => table.withoutRowid)
        .map((table) => table.name)
        .sort(),
    ).toEqual([...WITHOUT_ROWID].sort());
  });

  it("bounds a chunk by bytes as well as rows, and copies a row whose JSON is past D1's 2 MB value limit with its columns bound apart", async () => {
    const { client } = await makeTenant({ shard: "A" });
    const { subscription } = await subscribeToReceiver(client, { all_payment_details: true });
    const a = env.SHARD_A!;
    // 60 deliveries with 100 KB bodies (6 MB: more than one chunk's bytes, fewer than its rows),
    // then one whose 1.9 MB body is all quotes: its row fits D1's 2 MB, its JSON (3.8 MB) does not.
    const insert = (id: string, body: string, at: number) => endedDelivery(a, { id, subscriptionId: subscription.id, accountId: client.accountId, body, at });
    const large = Array.from({ length: 60 }, (_, i) => insert(`large-${String(i).padStart(2, "0")}`, `{"padding":"${"x".repeat(100_000)}"}`, 2000 + i));
    await a.batch(large);
    await insert("largest", '"'.repeat(1_900_000), 3000).run();
    const b = env.SHARD_B!;
    const copied: number[] = [];
    for (const table of MOVED_TABLES) {
      const upTo = table.withoutRowid ? 0 : Number((await a.prepare(`select coalesce(max(rowid), 0) as n from "${table.name}"`).first<{ n: number }>())!.n);
      for (let after: CopyCursor = 0; ;) {
        const chunk = await copyChunk(a, b, table, client.accountId, after, upTo);
        if (chunk.last === null) break;
        if (table.name === "webhook_deliveries") copied.push(chunk.copied);
        after = chunk.last;
      }
    }
    // No chunk read more than COPY_READ_BYTES of values, but for a row alone.
    expect(copied.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...copied)).toBeLessThanOrEqual(Math.floor(COPY_READ_BYTES / 100_000));
    expect(copied.reduce((sum, n) => sum + n, 0)).toBe(61);
    // Compared as text: a difference would print megabytes.
    for (const table of MOVED_TABLES)
      expect(JSON.stringify(await rowsOf(b, table, client.accountId)) === JSON.stringify(await rowsOf(a, table, client.accountId)), table.name).toBe(true);
  });
});
