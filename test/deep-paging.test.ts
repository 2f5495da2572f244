import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ServiceContext } from "../src/context";
import { createDb } from "../src/db/client";
import { listInvoices } from "../src/services/invoices";
import { countingD1 } from "../src/db/counting-d1";
import { BUCKET_SIZES_MS } from "../src/services/counts/buckets";
import { call, makeCounterparty, makePayment, makeTenant, shardD1 } from "./helpers/api";

// The figure uses 200,000 rows and page 1,000 (`PAGING_ROWS=200000 npm test -- deep-paging`);
// CI keeps the same shape smaller.
const ROWS = Number(env.PAGING_ROWS ?? 20_000);
const PAGE_SIZE = 100;
const DEEP_PAGE = Math.min(1000, ROWS / PAGE_SIZE);

describe(`deep paging over ${ROWS} invoices`, () => {
  it("reads the same rows at page 2 and at the deepest page when following next links", async () => {
    const { account, client } = await makeTenant();
    const buyer = await makeCounterparty(client, "buyer");
    const supplier = await makeCounterparty(client, "supplier");
    const t0 = Date.UTC(2026, 0, 1);
    const shard = await shardD1(account.id);
    await shard.batch([
      shard
        .prepare(
          `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?)
         insert into invoices (id, account_id, invoice_number, buyer_id, supplier_id, amount_cents, currency, created_at, updated_at)
         select printf('inv_bench%016d', i), ?, printf('B-%d', i), ?, ?, 100, 'USD', ? + i * 7 / 3, ? + i * 7 / 3 from n`,
        )
        .bind(ROWS, account.id, buyer.id, supplier.id, t0, t0),
      shard.prepare("insert into list_counts (account_id, resource, n) values (?, 'invoices', ?)").bind(account.id, ROWS),
      // The time buckets createInvoice keeps, counted from the invoices' rows.
      ...BUCKET_SIZES_MS.map((size) =>
        // The size inline: a bound number is a REAL to SQLite, and the division would not floor.
        shard
          .prepare(
            `insert into time_counts (account_id, key, size, bucket, n) select account_id, 'invoices.created_at', ${size}, (created_at / ${size}) * ${size}, count(*) from invoices where account_id = ? group by 1, 2, 3, 4`,
          )
          .bind(account.id),
      ),
    ]);

    const { db: d1, tally } = countingD1(shard);
    const db = createDb(d1);
    const readPage = async (request: Parameters<typeof listInvoices>[2]) => {
      const before = tally.rowsRead;
      const page = await listInvoices({ db, accountId: account.id } as ServiceContext, {}, request);
      return { page: page!, rowsRead: tally.rowsRead - before };
    };

    const first = await readPage({ kind: "offset", page: 1, size: PAGE_SIZE });
    expect(first.page.count).toBe(ROWS);
    let page = first.page;
    const rowsReadAt: Record<number, number> = { 1: first.rowsRead };
    const seen = new Set(page.rows.map((row) => row.id));
    for (let n = 2; n <= DEEP_PAGE; n++) {
      const last = page.rows.at(-1)!;
      const next = await readPage({ kind: "cursor", cursor: { page: n, dir: "after", key: [last.createdAt, last.id] }, size: PAGE_SIZE });
      page = next.page;
      rowsReadAt[n] = next.rowsRead;
      for (const row of page.rows) seen.add(row.id);
    }
    const byOffset = await readPage({ kind: "offset", page: DEEP_PAGE, size: PAGE_SIZE });
    console.info(
      JSON.stringify({
        rows: ROWS,
        page_size: PAGE_SIZE,
        rows_read: {
          page_1: rowsReadAt[1],
          page_2: rowsReadAt[2],
          [`page_${DEEP_PAGE}_by_next_links`]: rowsReadAt[DEEP_PAGE],
          [`page_${DEEP_PAGE}_by_page_param`]: byOffset.rowsRead,
        },
      }),
    );

    expect(seen.size).toBe(DEEP_PAGE * PAGE_SIZE);
    expect(page.rows.map((row) => row.id)).toEqual(byOffset.page.rows.map((row) => row.id));
    // The page's rows plus one look-ahead row and the stored count; the same at any depth.
    for (const n of [2, DEEP_PAGE]) expect(rowsReadAt[n]).toBeLessThanOrEqual(PAGE_SIZE + 5);
    expect(Math.abs(rowsReadAt[DEEP_PAGE]! - rowsReadAt[2]!)).toBeLessThanOrEqual(2);
    // page=N finds its start through the time buckets instead of walking the rows before it.
    expect(byOffset.rowsRead).toBeLessThan(PAGE_SIZE + 1000);
  }, 120_000);
});

describe("a payment's detail among many invoices", () => {
  it("reads a handful of rows, not every invoice of the account", async () => {
    const { account, client } = await makeTenant();
    const { payment, buyer, supplier } = await makePayment(client);
    const shard = await shardD1(account.id);
    await shard
      .prepare(
        `with recursive n(i) as (select 1 union all select i + 1 from n where i < 5000)
       insert into invoices (id, account_id, invoice_number, buyer_id, supplier_id, amount_cents, currency, created_at, updated_at)
       select printf('inv_many%017d', i), ?, printf('M-%d', i), ?, ?, 100, 'USD', i, i from n`,
      )
      .bind(account.id, buyer.id, supplier.id)
      .run();
    for (const path of [`/v2/payments/${payment.id}/`, "/v2/payments/"]) {
      const res = await call("GET", path, { headers: client.headers, bindings: { SERVER_TIMING: "true" } });
      expect(res.status).toBe(200);
      const rowsRead = Number(/d1-rows-read;desc="(\d+)"/.exec(res.headers.get("server-timing")!)![1]);
      expect(rowsRead, path).toBeLessThan(50);
    }
  });
});
