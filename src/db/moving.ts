import { sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/**
 * True for rows of accounts that no move holds (services/moves/): on the shard it leaves, an account
 * past the start of its cut-over (`draining`, `frozen`, `leaving`), and on the shard it moves to,
 * its copy until the switch (`arriving`), get no delivery leases, and the shard-wide jobs (sweeper,
 * retention, idempotency clean-up) leave their rows alone: nothing is sent from both shards, and
 * the source's triggers refuse none of those jobs' statements. With no move under way, `moves` is
 * empty: one look-up of it by key per row.
 */
export function notHeldByMove(account: SQLiteColumn | SQL): SQL {
  return sql`not exists (select 1 from moves m where m.state <> 'copying' and m.account_id = ${account})`;
}
