import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { PAYMENT_STATUSES, statusColumn } from "../../src/db/schema";
import { call, makeCounterparty, makePayment, makeTenant, shardD1 } from "../helpers/api";

// Migration 0016 folds each payment status's own count rows into columns of the payments' rows.
// Here an account's counts are put back in the form the service wrote before it, the migration's
// data statements and triggers run, and the lists must count as they did.
const MIGRATION = "0016_status_count_columns.sql";
const LATER = "0017_folded_payment_counts.sql";

/** The migration's statements of one kind (`UPDATE`, `DELETE`, `CREATE TRIGGER`), leading comments aside. */
function statements(...kinds: string[]): string[] {
  return statementsOf(MIGRATION, ...kinds);
}

function statementsOf(name: string, ...kinds: string[]): string[] {
  const migration = (env.MIGRATIONS_SHARD as { name: string; queries: string[] }[]).find((m) => m.name === name);
  if (!migration) throw new Error(`no migration ${name}`);
  const bare = (query: string) => query.replace(/^(\s*--[^\n]*\n)*\s*/, "");
  return migration.queries.filter((query) => kinds.some((kind) => bare(query).toUpperCase().startsWith(kind)));
}

describe("migration 0016: status counts as columns", () => {
  it("moves each status's own count rows into the columns and removes them, the lists counting as before, then refuses a count in the old form", async () => {
    const { account, client, processor } = await makeTenant();
    const parties = { buyer: await makeCounterparty(client, "buyer"), supplier: await makeCounterparty(client, "supplier") };
    const made: { id: string; created: string }[] = [];
    for (let i = 0; i < 5; i++) made.push((await makePayment(client, parties)).payment);
    const move = (id: string, status: string) => call("POST", `/v2/payments/${id}/events/`, { body: { event_code: "PX", description: status, status }, headers: processor.headers });
    for (const payment of made.slice(0, 3)) expect((await move(payment.id, "in-progress")).status).toBe(201);
    expect((await move(made[0]!.id, "settled")).status).toBe(201);
    expect((await move(made[4]!.id, "canceled")).status).toBe(201);

    // A range of whole days: its count is read from the created buckets' status columns alone.
    const lists = PAYMENT_STATUSES.flatMap((status) => [`/v2/payments/?status=${status}`, `/v2/payments/?status=${status}&created__gte=2020-01-01&created__lt=2100-01-01`]);
    const counts = async () => Promise.all(lists.map(async (path) => (await call("GET", path, { headers: client.headers })).json.count as number));
    const before = await counts();
    expect(before.slice(0, 2)).toEqual([1, 1]); // pending: made[3]
    expect(before.slice(2, 4)).toEqual([2, 2]); // in-progress: made[1], made[2]

    // The counts as the service stored them before: a row per status, the columns unused (and
    // the triggers that refuse such rows, which the migration makes last, not there yet).
    const shard = await shardD1(account.id);
    const triggers = statements("CREATE TRIGGER");
    expect(triggers).toHaveLength(2);
    // Every migration applied: a later rebuild of either table must have made them again.
    const applied = await shard.prepare("select name from sqlite_master where type = 'trigger' and name like '%_status_in_columns' order by name").all<{ name: string }>();
    expect(applied.results.map((row) => row.name)).toEqual(["list_counts_status_in_columns", "time_counts_status_in_columns"]);
    await shard.batch(["list_counts", "time_counts"].map((table) => shard.prepare(`drop trigger ${table}_status_in_columns`)));
    // Migration 0017's guards came after 0016 ran: they are made again at the end.
    const later = statementsOf(LATER, "CREATE TRIGGER");
    const laterNames = later.map((text) => /CREATE TRIGGER `([^`]+)`/.exec(text)![1]!);
    expect(laterNames).toHaveLength(4);
    await shard.batch(laterNames.map((name) => shard.prepare(`drop trigger ${name}`)));
    const columns = PAYMENT_STATUSES.map(statusColumn);
    const zeroed = columns.map((column) => `${column} = 0`).join(", ");
    await shard.batch([
      ...PAYMENT_STATUSES.map((status) =>
        shard
          .prepare(`insert into list_counts (account_id, resource, n) select account_id, 'payments/status=${status}', ${statusColumn(status)} from list_counts where account_id = ? and resource = 'payments' and ${statusColumn(status)} > 0`)
          .bind(account.id),
      ),
      ...PAYMENT_STATUSES.map((status) =>
        shard
          .prepare(
            `insert into time_counts (account_id, key, size, bucket, n) select account_id, 'payments.created_at|status=${status}', size, bucket, ${statusColumn(status)} from time_counts where account_id = ? and key = 'payments.created_at' and ${statusColumn(status)} > 0`,
          )
          .bind(account.id),
      ),
      shard.prepare(`update list_counts set ${zeroed} where account_id = ? and resource = 'payments'`).bind(account.id),
      shard.prepare(`update time_counts set ${zeroed} where account_id = ? and key = 'payments.created_at'`).bind(account.id),
    ]);
    const legacy = await shard
      .prepare("select (select count(*) from list_counts where account_id = ?1 and resource like 'payments/status=%') + (select count(*) from time_counts where account_id = ?1 and key like '%|status=%') as n")
      .bind(account.id)
      .first<{ n: number }>();
    expect(legacy!.n).toBeGreaterThan(0);

    for (const statement of [...statements("UPDATE", "DELETE"), ...triggers]) await shard.prepare(statement).run();

    expect(await counts()).toEqual(before);
    const left = await shard
      .prepare("select (select count(*) from list_counts where resource like 'payments/status=%') + (select count(*) from time_counts where key like '%|status=%') as n")
      .first<{ n: number }>();
    expect(left!.n).toBe(0);

    // A Worker still on the old code counts a new payment's status in a row of its own: refused.
    for (const old of [
      `insert into list_counts (account_id, resource, n) values ('${account.id}', 'payments/status=pending', 1) on conflict do update set n = n + 1`,
      `insert into time_counts (account_id, key, size, bucket, n) values ('${account.id}', 'payments.created_at|status=pending', 1000, 0, 1) on conflict do update set n = n + 1`,
    ]) {
      await expect(shard.prepare(old).run()).rejects.toThrow(/status counts are columns/);
    }
    expect(await counts()).toEqual(before);
    for (const statement of later) await shard.prepare(statement).run();
  });
});
