/**
 * Canceling a move before its cut-over (DELETE /admin/accounts/{id}/move/), for a move that
 * cannot progress (a shard the configuration lacks) or that an operator no longer wants.
 *
 * The account never stopped working on its own shard before the cut-over, so nothing of it is
 * lost: the source's `moves` row and log go at once (its triggers stop logging), and the copy's
 * rows on the target, when the target is configured, are removed by the cron in bounded steps
 * (`canceling`), as erasure removes an account's rows. Once they are gone the account has no move.
 * A move past its freeze (`frozen`, `leaving`) is finishing: 409.
 */
import { and, eq, inArray, isNull, lt, or } from "drizzle-orm";
import { createDb, runNamedD1Batch, type Db } from "../../db/client";
import { accounts } from "../../db/schema";
import { shardBinding } from "../../db/shards";
import type { Env } from "../../env";
import { conflict } from "../../errors";
import { getAccount, type Account } from "../accounts";
import { removeAccountRows } from "../erasure";

const CANCELABLE = ["copying", "draining"] as const;
const NO_MOVE = { moveTo: null, moveState: null, moveStartedAt: null, moveCopiedRows: null, moveProgress: null } as const;

/** Cancels the account's move: 202 and the account, its move `canceling` until the copy is removed (or gone at once when there is none to remove). */
export async function cancelMove(directory: Db, env: Env, id: string, now = Date.now()): Promise<Account> {
  const account = await getAccount(directory, id);
  if (!account.moveState) throw conflict("The account is not moving.");
  if (account.moveState === "canceling") return account;
  if (!(CANCELABLE as readonly string[]).includes(account.moveState)) throw conflict("The move is past its cut-over and is finishing: it cannot be canceled.");
  const target = shardBinding(env, account.moveTo!);
  // Taken under the move's lease, so no step of the copy runs meanwhile.
  const [canceled] = await directory
    .update(accounts)
    .set(target ? { moveState: "canceling", moveLeaseUntil: null } : { ...NO_MOVE, moveLeaseUntil: null })
    .where(and(eq(accounts.id, id), inArray(accounts.moveState, [...CANCELABLE]), or(isNull(accounts.moveLeaseUntil), lt(accounts.moveLeaseUntil, now))))
    .returning();
  if (!canceled) throw conflict("A step of the move is running; try again in a minute.");
  const source = shardBinding(env, account.shard);
  if (source) {
    // Its triggers stop logging at once. What is left of its log is harmless (an apply of the log reads each
    // logged row as it is now) and goes with the account's rows when it leaves or is erased.
    await runNamedD1Batch(source, {
      move: source.prepare("delete from moves where account_id = ?1").bind(id),
      log: source.prepare(`delete from move_log where seq in (select seq from move_log where account_id = ?1 limit ${CHUNK})`).bind(id),
    });
    // As after a failed cut-over: deliveries handed over at their creation and never since, which
    // the sweeper left alone while the move held them (its mark passed them), become due again,
    // CHUNK a statement (their queue messages, held back while it moved, come back meanwhile).
    for (let step = 0; step < CHUNK_STEPS; step++) {
      const done = await source
        .prepare(
          `update webhook_deliveries set enqueued_at = null where id in (select id from webhook_deliveries where account_id = ?1 and status = 'pending' and enqueued_at = created_at limit ${CHUNK})`,
        )
        .bind(id)
        .run();
      if ((done.meta.changes ?? 0) < CHUNK) break;
    }
  }
  return canceled;
}

/** Rows one statement of a cancel changes at most, and how many such statements it runs at most. */
const CHUNK = 5_000;
const CHUNK_STEPS = 20;

/** One bounded step of a canceled move: removes some of the copy on the target; the last step ends the move. */
export async function stepCancel(directory: Db, env: Env, account: Account): Promise<void> {
  const target = shardBinding(env, account.moveTo!);
  if (target) {
    if ((await removeAccountRows(createDb(target), account.id, { pause: false })) > 0) return;
    await target.prepare("delete from moves where account_id = ?1").bind(account.id).run();
  }
  await directory
    .update(accounts)
    .set(NO_MOVE)
    .where(and(eq(accounts.id, account.id), eq(accounts.moveState, "canceling")));
}
