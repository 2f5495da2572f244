/**
 * What a move copies: every shard table that holds an account's rows, parents before the rows
 * that refer to them, each with its primary key and how its rows name their account (as SQL over
 * the row, `row.` standing for the table or a trigger's NEW/OLD).
 */
export interface MovedTable {
  name: string;
  key: string[];
  /** SQL giving a row's account, `row.` standing for the row (a trigger's NEW or OLD). */
  account: string;
  /** SQL picking the account's rows, the account id bound as ?1. */
  rows: string;
  /** A WITHOUT ROWID table: the bulk copy walks it in key order, not rowid order. */
  withoutRowid?: true;
}

const own = (name: string, key: string[], column = "account_id"): MovedTable => ({ name, key, account: `row.${column}`, rows: `"${column}" = ?1` });
/** A table whose rows belong to the account through a parent row (`column` names it in `parent`). */
const child = (name: string, key: string[], column: string, parent: string): MovedTable => ({
  name,
  key,
  account: `(select x.account_id from ${parent} x where x.id = row.${column})`,
  rows: `"${column}" in (select id from ${parent} where account_id = ?1)`,
});
const withoutRowid = (table: MovedTable): MovedTable => ({ ...table, withoutRowid: true });

export const MOVED_TABLES: readonly MovedTable[] = [
  own("tenants", ["id"], "id"),
  own("counterparties", ["id"]),
  own("invoices", ["id"]),
  own("payments", ["id"]),
  withoutRowid(child("payment_invoices", ["invoice_id", "released_by"], "invoice_id", "invoices")),
  withoutRowid(child("payment_events", ["payment_id", "seq"], "payment_id", "payments")),
  own("webhook_subscriptions", ["id"]),
  withoutRowid(own("webhook_deliveries", ["id"])),
  withoutRowid(child("webhook_attempts", ["delivery_id", "number"], "delivery_id", "webhook_deliveries")),
  child("webhook_stats", ["subscription_id", "bucket_start"], "subscription_id", "webhook_subscriptions"),
  own("webhook_replays", ["id"]),
  child("webhook_replay_items", ["replay_id", "sequence"], "replay_id", "webhook_replays"),
  withoutRowid(own("list_counts", ["account_id", "resource"])),
  withoutRowid(own("time_counts", ["account_id", "key", "size", "bucket"])),
  own("idempotency_keys", ["account_id", "username", "key"]),
];

/** The triggers that log, or refuse, a moving account's changes to `table` (the shard's move_triggers migration). */
export function moveTriggers(table: MovedTable): string[] {
  return (["INSERT", "UPDATE", "DELETE"] as const).map((op) => {
    const row = op === "DELETE" ? "OLD" : "NEW";
    const account = table.account.replaceAll("row.", `${row}.`);
    const key = `json_array(${table.key.map((column) => `${row}."${column}"`).join(", ")})`;
    const refused = op === "DELETE" ? "m.state = 'frozen'" : "m.state in ('frozen', 'leaving')";
    return [
      `CREATE TRIGGER "move_${table.name}_${op.toLowerCase()}" AFTER ${op} ON "${table.name}"`,
      `WHEN EXISTS (SELECT 1 FROM moves) BEGIN`,
      `  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = ${account} AND ${refused};`,
      `  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, '${table.name}', ${key} FROM moves m WHERE m.account_id = ${account} AND m.state IN ('copying', 'draining');`,
      `END;`,
    ].join("\n");
  });
}
