import { sql, type SQL } from "drizzle-orm";
import { runBatch, type BatchStatement, type Db } from "../../db/client";
import { guardedInsert } from "../../db/guarded-insert";
import { listCounts, PAYMENT_STATUSES, statusColumn, timeCounts } from "../../db/schema";
import { BUCKET_SIZES_MS } from "./buckets";
import { keyParts, storedAt, type CountKey } from "./stored";
import { addedOn, COUNT_COLUMNS } from "./time";
import { isBudgetSpent } from "../../lib/run-budget";

/**
 * An account's payment counts (list_counts' `payments` row and counterparty rows, time_counts'
 * `payments.created_at` and `payments.updated_moves` buckets) are not written by each payment
 * change. They count every change up to a mark (`counted_to` on the `payments` row: a payment
 * stamp), and the changes after it are counted from the payments and their events, which the
 * change writes anyway: a read adds `changesAfterMark` to what is stored, so a count is exact at
 * every moment. A fold (`foldStatements`, one batch) adds those changes to the stored counts and
 * moves the mark to the account's latest stamp; writes ask for one when their account's mark lags
 * by FOLD_AFTER_MS, and the cron folds every account of a shard whose mark is behind. A change's
 * batch so writes no count row, and a fold writes each count row once for all the changes it
 * takes in.
 *
 * Stamps rise in commit order per account (services/payments/write-fence.ts), so every change
 * after the mark has a stamp above it, and a fold, one batch, sees every change up to the stamp it
 * moves the mark to.
 */
export const FOLD_AFTER_MS = 1_000;

/** The mark: the stamp the account's payment counts count changes up to (0: none yet). */
export function countedTo(accountId: string | SQL): SQL {
  return sql`coalesce((select counted_to from list_counts where account_id = ${accountId} and resource = 'payments'), 0)`;
}

/** Reads the account's mark, as `{ mark }`: a write reads it in its batch to know whether to ask for a fold. */
export function selectCountedTo(db: Db, accountId: string) {
  return db.select({ mark: countedTo(accountId).mapWith(Number) }).from(sql`(select 1)`);
}

// Each status as an SQL literal (they are constants; D1 allows 100 bound parameters a statement).
const COLUMNS = PAYMENT_STATUSES.map((status) => [sql.raw(`'${status}'`), statusColumn(status)] as const);

/**
 * What the changes after the mark add to the counts, as rows of (key: a time_counts key, at: the
 * stamp whose buckets it counts in, n, a column per status, orig and recv: a new payment's
 * counterparties, else null). A new payment adds one to `n` and its status at its `created`; a
 * status change moves one between two statuses at the payment's `created`; every event moves
 * `updated` (`payments.updated_moves`) from the previous event's stamp to its own. Read on the
 * payments' `updated` index (the payments changed after the mark) and their events' keys.
 * Without `moves`, only the `payments.created_at` rows (what a count of `created` or of the list
 * counts needs: a shorter statement).
 */
export function changesAfterMark(accountId: string, { moves = true } = {}): SQL {
  const mark = countedTo(accountId);
  const made = sql.join(
    COLUMNS.map(([status, column]) => sql`(s = ${status}) as ${sql.identifier(column)}`),
    sql`, `,
  );
  const moved = sql.join(
    COLUMNS.map(([status, column]) => sql`(s = ${status}) - (was = ${status}) as ${sql.identifier(column)}`),
    sql`, `,
  );
  const none = sql.join(
    COLUMNS.map(([, column]) => sql`0 as ${sql.identifier(column)}`),
    sql`, `,
  );
  return sql`(with changed as (
      select e.seq, e.created_at as at, e.status as s, f.status as was, f.created_at as was_at, p.created_at as created,
        p.originating_counterparty_id as orig, p.receiving_counterparty_id as recv
      from (select ${mark} as m) k
      join payments p on p.account_id = ${accountId} and p.updated_at > k.m
      join payment_events e on e.payment_id = p.id and e.created_at > k.m
      left join payment_events f on f.payment_id = e.payment_id and f.seq = e.seq - 1)
    select 'payments.created_at' as key, at, 1 as n, ${made}, orig, recv from changed where seq = 1
    union all select 'payments.created_at', created, 0, ${moved}, null, null from changed where seq > 1 and s <> was${
      moves
        ? sql`
    union all select 'payments.updated_moves', at, 1, ${none}, null, null from changed where seq > 1
    union all select 'payments.updated_moves', was_at, -1, ${none}, null, null from changed where seq > 1`
        : sql``
    })`;
}

/**
 * What the changes after the mark add to a stored payment count (a list_counts key: `payments`, a
 * status's, or a counterparty's), as a scalar.
 */
export function addedAfterMark(accountId: string, key: CountKey): SQL {
  const { column } = storedAt(key);
  const { field, value } = keyParts(key);
  const party = { originating_counterparty_id: "orig", receiving_counterparty_id: "recv" }[field ?? ""];
  const of = party ? sql` and ${sql.identifier(party)} = ${value}` : sql``;
  return sql`(select coalesce(sum(${sql.identifier(column)}), 0) from ${changesAfterMark(accountId, { moves: false })} where key = 'payments.created_at'${of})`;
}

/**
 * The batch that adds the changes after the mark to the stored counts and moves the mark to the
 * account's latest stamp; it writes nothing when no change is after the mark. The mark moves last:
 * every statement before it reads the same changes. With `markBefore`, only if the mark is still
 * below it when the batch runs (of writes that each ask for a fold, the first does it).
 */
export function foldStatements(db: Db, accountId: string, markBefore?: number): BatchStatement[] {
  // The list counts need only the `created` rows; the buckets also the moves of `updated`.
  const made = changesAfterMark(accountId, { moves: false });
  const changes = changesAfterMark(accountId);
  const due = markBefore === undefined ? sql`true` : sql`${countedTo(accountId)} < ${markBefore}`;
  const latest = sql`(select coalesce(max(updated_at), 0) from payments where account_id = ${accountId})`;
  // Each statement inserts the rows of a grouped subquery `g`, naming every column it gives.
  const g = (column: string) => sql`${sql.identifier("g")}.${sql.identifier(column)}`;
  const summed = (make: (name: SQL) => SQL) =>
    sql.join(
      COUNT_COLUMNS.map((name) => sql`${make(sql`${sql.identifier(name)}`)} as ${sql.identifier(name)}`),
      sql`, `,
    );
  // n and every status column, each from the subquery's column of its name.
  const fromG = Object.fromEntries(COUNT_COLUMNS.map((name) => [name, g(name)])) as { n: SQL } & Record<string, SQL>;
  const added = { ...addedOn(), countedTo: sql`excluded.counted_to` };
  const sizes = sql.join(
    BUCKET_SIZES_MS.map((size) => sql`select ${size} as size`),
    sql` union all `,
  );
  const nonZero = sql.join(
    COUNT_COLUMNS.map((name) => sql`sum(${sql.identifier(name)}) <> 0`),
    sql` or `,
  );
  return [
    // Each counterparty's row: the payments made after the mark (its statuses stay at their default 0).
    guardedInsert(
      db,
      listCounts,
      { accountId, resource: g("resource"), n: g("n"), countedTo: latest },
      due,
      sql`(select 'payments/originating_counterparty_id=' || orig as resource, count(*) as n from ${made} where orig is not null group by orig
          union all
          select 'payments/receiving_counterparty_id=' || recv as resource, count(*) as n from ${made} where recv is not null group by recv) g`,
    ).onConflictDoUpdate({ target: [listCounts.accountId, listCounts.resource], set: { n: sql`n + excluded.n`, countedTo: sql`excluded.counted_to` } }),
    // Every bucket of every size the changes fall in.
    guardedInsert(
      db,
      timeCounts,
      { accountId, key: g("key"), size: g("size"), bucket: g("bucket"), ...fromG, countedTo: latest },
      due,
      sql`(select key, size, at - at % size as bucket, ${summed((name) => sql`sum(${name})`)} from ${changes}, (${sizes})
          group by key, size, bucket having ${nonZero}) g`,
    ).onConflictDoUpdate({ target: [timeCounts.accountId, timeCounts.key, timeCounts.size, timeCounts.bucket], set: added }),
    // The account's `payments` row, with its statuses; it moves the mark, last.
    guardedInsert(
      db,
      listCounts,
      { accountId, resource: "payments", ...fromG, countedTo: latest },
      sql`${latest} > ${countedTo(accountId)} and ${due}`,
      sql`(select ${summed((name) => sql`coalesce(sum(${name}), 0)`)} from ${made} where key = 'payments.created_at') g`,
    ).onConflictDoUpdate({ target: [listCounts.accountId, listCounts.resource], set: added }),
  ];
}

/**
 * Folds the account's changes after the mark into its stored counts (one batch; see
 * foldStatements), and logs what it cost D1 when it wrote (`counts_folded`: the capacity model
 * adds it to the changes it measures).
 */
export async function foldPaymentCounts(db: Db, accountId: string, markBefore?: number): Promise<void> {
  const results = (await runBatch(db, foldStatements(db, accountId, markBefore))) as Partial<D1Result>[];
  const rowsWritten = results.reduce((sum, result) => sum + (result.meta?.rows_written ?? 0), 0);
  const sqlMs = results.reduce((sum, result) => sum + (result.meta?.duration ?? 0), 0);
  if (rowsWritten > 0)
    console.log(JSON.stringify({ type: "counts_folded", account_id: accountId, rows_written: rowsWritten, sql_ms: Number(sqlMs.toFixed(3)) }));
}

/**
 * One cron step on a shard: folds the payment counts of at most `limit` accounts whose mark is
 * behind (those no write asked to fold lately). Each account is its own batch; one that fails is
 * a log line, and the rest still fold. Returns how many folded.
 */
export async function foldBehindAccounts(db: Db, limit = 50): Promise<number> {
  const behind = await db.all<{ id: string }>(
    sql`select t.id from tenants t where exists (select 1 from payments p where p.account_id = t.id and p.updated_at > ${countedTo(sql.raw("t.id"))}) limit ${limit}`,
  );
  let folded = 0;
  for (const { id } of behind) {
    try {
      await foldPaymentCounts(db, id);
      folded++;
    } catch (error) {
      if (isBudgetSpent(error)) throw error;
      console.error(JSON.stringify({ type: "fold_error", account_id: id, error: String(error) }));
    }
  }
  return folded;
}
