import { applyD1Migrations, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrateReplicas } from "../helpers/replicas";

await migrateReplicas();

// Each database's migrations start from one baseline (migrations/README.md). A database built from
// it must have the schema the steps it replaced build (test/fixtures/pre-baseline-migrations),
// table by table, index by index and trigger by trigger, but for the steps' deploy-window guards.

/** Triggers of the old steps 0016 and 0017 that refused counts written by code older than them. */
const DEPLOY_WINDOW_GUARDS = [
  "list_counts_payments_folded_insert",
  "list_counts_payments_folded_update",
  "list_counts_status_in_columns",
  "time_counts_payments_folded_insert",
  "time_counts_payments_folded_update",
  "time_counts_status_in_columns",
];

type Row = Record<string, unknown>;

/** The shard step after the baselines: columns renamed in place (migrations/README.md). */
const RENAMES = "0002_lease_backoff_released_by.sql";

/**
 * A database's schema as SQLite keeps it. Columns are compared by name: a column added by ALTER
 * TABLE comes last, where the baseline names it in its place, and nothing reads columns by position
 * (a move names every column it copies).
 */
async function schemaOf(d1: D1Database) {
  const { results: objects } = await d1
    .prepare(
      "select type, name, tbl_name, sql from sqlite_master where name not like 'sqlite_%' and name not like '_cf_%' and name <> 'd1_migrations' order by type, name",
    )
    .all<{ type: string; name: string; tbl_name: string; sql: string | null }>();
  const all = async (sql: string) => (await d1.prepare(sql).all<Row>()).results;
  const tables: Record<string, unknown> = {};
  for (const table of objects.filter((object) => object.type === "table")) {
    const byName = (rows: Row[]) =>
      rows.map(({ cid: _cid, seq: _seq, id: _id, ...rest }) => rest).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    const indexes = await all(`pragma index_list(\`${table.name}\`)`);
    tables[table.name] = {
      columns: byName(await all(`pragma table_xinfo(\`${table.name}\`)`)),
      foreignKeys: byName(await all(`pragma foreign_key_list(\`${table.name}\`)`)),
      // Keys and unique constraints: their own indexes, named by SQLite for where they appear.
      keys: await Promise.all(
        indexes
          .filter((index) => index.origin !== "c")
          .map(async (index) => ({
            origin: index.origin,
            unique: index.unique,
            columns: (await all(`pragma index_info(\`${index.name}\`)`)).map((column) => column.name),
          })),
      ),
      withoutRowid: /\)\s*WITHOUT ROWID\s*$/i.test(table.sql ?? ""),
    };
  }
  const text = (sql: string | null) => (sql ?? "").replace(/\s+/g, " ").trim();
  const named = (type: string) =>
    Object.fromEntries(objects.filter((object) => object.type === type).map((object) => [object.name, { table: object.tbl_name, sql: text(object.sql) }]));
  return { tables, indexes: named("index"), triggers: named("trigger"), views: named("view") };
}

describe("the baseline migrations", () => {
  it("build the shard's schema that the 20 steps before them built, but for the deploy-window guards", async () => {
    await applyD1Migrations(env.STEPPED_SHARD, env.PRE_BASELINE_SHARD);
    await applyD1Migrations(env.BASELINE_SHARD, env.MIGRATIONS_SHARD.slice(0, 2));
    expect(env.PRE_BASELINE_SHARD).toHaveLength(20);
    expect(env.MIGRATIONS_SHARD.map((migration) => migration.name).slice(0, 3)).toEqual(["0000_shard.sql", "0001_move_triggers.sql", RENAMES]);
    const stepped = await schemaOf(env.STEPPED_SHARD);
    const baseline = await schemaOf(env.BASELINE_SHARD);
    expect(
      Object.keys(stepped.triggers)
        .filter((name) => DEPLOY_WINDOW_GUARDS.includes(name))
        .sort(),
    ).toEqual(DEPLOY_WINDOW_GUARDS);
    for (const guard of DEPLOY_WINDOW_GUARDS) delete stepped.triggers[guard];
    expect(Object.keys(baseline.tables)).toHaveLength(16);
    expect(Object.keys(baseline.triggers)).toHaveLength(39);
    expect(baseline).toEqual(stepped);
  });

  it("build the directory's schema that the 3 steps before it built (the step after the baseline changes data only)", async () => {
    await applyD1Migrations(env.STEPPED_DB, env.PRE_BASELINE_DIRECTORY);
    const baselineFiles = env.MIGRATIONS_DIRECTORY.filter((migration) => ["0000_directory.sql", "0001_move_phase_leaving.sql"].includes(migration.name));
    await applyD1Migrations(env.BASELINE_DB, baselineFiles);
    expect(env.PRE_BASELINE_DIRECTORY).toHaveLength(3);
    expect(baselineFiles).toHaveLength(2);
    const baseline = await schemaOf(env.BASELINE_DB);
    expect(Object.keys(baseline.tables).sort()).toEqual(["accounts", "api_users", "auth_failures", "shards"]);
    expect(baseline).toEqual(await schemaOf(env.STEPPED_DB));
  });

  it("carry a move in its last phase over to that phase's one name, leaving every other account as it was", async () => {
    // A directory with the baseline's schema, a move in its last phase and one copying; then the step after it.
    const d1 = env.REPLICA_DB;
    const account = (id: string, state: string) =>
      d1.prepare("insert into accounts (id, name, created_at, shard, move_to, move_state) values (?1, ?1, 1, 'B', 'B', ?2)").bind(id, state);
    await d1.batch([account("acct_last", "cleaning"), account("acct_copying", "copying")]);
    const step = env.MIGRATIONS_DIRECTORY.find((migration) => migration.name === "0001_move_phase_leaving.sql")!;
    await d1.batch(step.queries.map((query) => d1.prepare(query)));
    const states = await d1.prepare("select id, move_state as state from accounts order by id").all();
    expect(states.results).toEqual([
      { id: "acct_copying", state: "copying" },
      { id: "acct_last", state: "leaving" },
    ]);
  });

  it("carry a lease, a back-off and an invoice link's release over the shard's renames, the table's form and its move triggers kept", async () => {
    // The baseline's database (built by the first test, or here), before the step after it.
    const d1 = env.BASELINE_SHARD;
    await applyD1Migrations(d1, env.MIGRATIONS_SHARD.slice(0, 2));
    const before = await schemaOf(d1);
    await d1.batch([
      d1.prepare("insert into tenants (id, created_at) values ('acct_1', 1)"),
      d1.prepare(
        "insert into counterparties (id, account_id, internal_id, type, name, created_at, updated_at) values ('cp_1', 'acct_1', 'i', 'buyer', 'c', 1, 1)",
      ),
      d1.prepare(
        "insert into invoices (id, account_id, invoice_number, buyer_id, supplier_id, amount_cents, currency, created_at, updated_at) values ('inv_1', 'acct_1', 'n', 'cp_1', 'cp_1', 1, 'USD', 1, 1)",
      ),
      d1.prepare(
        "insert into payments (id, account_id, originating_counterparty_id, receiving_counterparty_id, amount_cents, currency, payment_method, status, version, write_token, created_at, updated_at) values ('pmt_1', 'acct_1', 'cp_1', 'cp_1', 1, 'USD', 'ach', 'failed', 1, 't', 1, 1)",
      ),
      d1.prepare("insert into payment_invoices (invoice_id, claim, payment_id) values ('inv_1', 'pmt_1', 'pmt_1')"),
      d1.prepare(
        "insert into webhook_subscriptions (id, account_id, user, event, url, content_type, credentials, secret, invoice_ids, payment_status, payment_events, refund_reason, instrument_number, all_payment_details, is_active, created_at, updated_at, held_until) values ('sub_1', 'acct_1', 'u', 'payment.changed', 'https://example.com', 'application/json', 'c', 's', 0, 0, 0, 0, 0, 0, 1, 1, 1, 99)",
      ),
      d1.prepare(
        "insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, created_at, updated_at, claimed_until, claim_token) values ('d_1', 'sub_1', 'acct_1', 'pmt_1', '{}', 'pending', 0, 1, 1, 42, 'tok')",
      ),
    ]);
    await applyD1Migrations(d1, env.MIGRATIONS_SHARD);
    const read = (sql: string) => d1.prepare(sql).first();
    expect(await read("select invoice_id, released_by, payment_id from payment_invoices")).toEqual({
      invoice_id: "inv_1",
      released_by: "pmt_1",
      payment_id: "pmt_1",
    });
    expect(await read("select leased_until, lease_token from webhook_deliveries")).toEqual({ leased_until: 42, lease_token: "tok" });
    expect(await read("select backoff_until from webhook_subscriptions")).toEqual({ backoff_until: 99 });
    const after = await schemaOf(d1);
    expect(after.tables.payment_invoices).toMatchObject({ withoutRowid: true });
    expect(after.triggers.move_payment_invoices_insert!.sql).toContain('NEW."released_by"');
    // The baseline's triggers all kept; the only ones added are those of the tables moved since (the replays').
    expect(Object.keys(after.triggers)).toEqual(expect.arrayContaining(Object.keys(before.triggers)));
    expect(
      Object.keys(after.triggers)
        .filter((name) => !(name in before.triggers))
        .sort(),
    ).toEqual(["webhook_replays", "webhook_replay_items"].flatMap((table) => ["insert", "update", "delete"].map((op) => `move_${table}_${op}`)).sort());
    expect(Object.keys(after.indexes).filter((name) => name.startsWith("webhook_deliveries_"))).toContain("webhook_deliveries_leased_idx");
  });

  it("tell apart schemas that differ in a table's key form, a column's default or an index's columns", async () => {
    // The comparison can fail: each change to a database built from the baseline shows.
    const d1 = env.BASELINE_SHARD;
    await applyD1Migrations(d1, env.MIGRATIONS_SHARD);
    const reference = await schemaOf(d1);
    const create = env.MIGRATIONS_SHARD[0]!.queries.find((query) => query.includes("CREATE TABLE `sweep_marks`"))!;
    type Schema = Awaited<ReturnType<typeof schemaOf>>;
    const changes: [string[], (schema: Schema) => unknown][] = [
      // Rebuilt with a rowid
      [
        [
          "drop table list_counts",
          env.MIGRATIONS_SHARD[0]!.queries.find((query) => query.includes("CREATE TABLE `list_counts`"))!.replace(/\)\s*WITHOUT ROWID/, ")"),
        ],
        (schema) => schema.tables.list_counts,
      ],
      // A default changed
      [["drop table sweep_marks", create.replace(/integer NOT NULL/, "integer DEFAULT 0 NOT NULL")], (schema) => schema.tables.sweep_marks],
      // An index over other columns
      [["drop index payments_created_idx", "create index payments_created_idx on payments (account_id, id)"], (schema) => schema.indexes.payments_created_idx],
    ];
    let before = reference;
    for (const [statements, part] of changes) {
      expect(statements.every((sql) => !env.MIGRATIONS_SHARD[0]!.queries.includes(sql))).toBe(true);
      await d1.batch(statements.map((sql) => d1.prepare(sql)));
      const after = await schemaOf(d1);
      expect(part(after)).toBeDefined();
      expect(part(after)).not.toEqual(part(before));
      before = after;
    }
  });
});
