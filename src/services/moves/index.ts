/**
 * Moving an account to another shard while it works (docs/interface.md, "Tenancy and
 * authentication").
 *
 * Protocol, one bounded step per cron run (`continueMoves`):
 *   start    the directory records the move (`copying`); nothing else changes yet.
 *   arm      the source shard gets a `moves` row for the account, in the batch that reads each
 *            table's highest rowid: from then on triggers log every change of its rows (move_log).
 *   bulk     rows up to those rowids are copied table by table, parents first, upserted by key
 *            (a WITHOUT ROWID table in key order to its end).
 *   log      the log is replayed: each logged row as it is now (upserted, or deleted when gone).
 *   drain    when the log is nearly caught up: no new delivery claims for the account, and the
 *            step waits until none of its attempts is in flight (so none is sent twice).
 *   freeze   every write of the account's rows on the source fails (503 `Account is moving`) for
 *            the few statements that follow: the last of the log is replayed, both shards must
 *            hold the same rows (count and size per table), the copy's pending deliveries are left
 *            for the new shard's sweeper to hand over, and the directory points at the new shard.
 *   leave    the source refuses all but deletes for the account and loses its rows in bounded
 *            steps (a late request routed there answers 503 and its retry reaches the new shard);
 *            then the move is done.
 * A check that fails at the freeze puts the account back to copying; nothing is ever lost, since
 * the source keeps every row until the directory points at the copy. Before the freeze, a move
 * can be canceled (cancel.ts).
 */
import { and, eq, isNotNull, isNull, lt, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { createDb } from "../../db/client";
import { fixedLimit } from "../../db/fixed-limit";
import { accounts } from "../../db/schema";
import { shardBinding, shardNotConfigured } from "../../db/shards";
import type { Env } from "../../env";
import { AppError, conflict, invalidField } from "../../errors";
import type { Account } from "../accounts";
import { getAccount } from "../accounts";
import { removeAccountRows } from "../erasure";
import { chooseShard, listShards } from "../shards";
import { stepCancel } from "./cancel";
import { copyChunk, fingerprint, replayLog, type CopyCursor } from "./copy";
import { MOVED_TABLES } from "./tables";

/** Where a copy stands: the bulk copy's table and place in it, each table's highest rowid when it began, and the log replayed so far. */
interface Progress {
  phase: "bulk" | "log";
  table: number;
  after: CopyCursor;
  upTo: number[];
  seq: number;
}

/** Log entries left when the drain starts: the freeze then replays at most about this many. */
const NEARLY_CAUGHT_UP = 200;
/** How long a step waits for the account's attempts in flight to end before it tries again next run. */
const DRAIN_WAIT_MS = 10_000;

export const MOVING = "Account is moving; retry shortly.";
export const MOVING_RETRY_AFTER_S = 2;
export { cancelMove } from "./cancel";

/** Starts moving an account to shard `to`: 202 and the account, its `move` showing the copy. */
export async function startMove(directory: Db, env: Env, id: string, to: string, now = Date.now()): Promise<Account> {
  const account = await getAccount(directory, id);
  if (account.moveState) throw conflict("The account is already moving.");
  if (account.shard === to) throw invalidField("shard", `The account is already on shard "${to}".`);
  // A move out of a shard the configuration lacks could never copy a row: refused as a move into one is.
  if (!shardBinding(env, account.shard)) throw invalidField("shard", `The account's shard "${account.shard}" is not configured: nothing can be moved out of it.`);
  const placed = chooseShard(await listShards(directory, env), to);
  if (placed.shard === undefined) throw invalidField("shard", placed.refusal);
  const [moving] = await directory
    .update(accounts)
    .set({ moveTo: to, moveState: "copying", moveStartedAt: now, moveCopiedRows: 0, moveProgress: null })
    .where(and(eq(accounts.id, id), isNull(accounts.moveState), isNull(accounts.erasedAt)))
    .returning();
  if (!moving) throw conflict("The account is already moving.");
  return moving;
}

/** How long past its budget a step's lease holds: the cut-over's last statements after the budget, with room to spare. */
const LEASE_MARGIN_MS = 60_000;

/**
 * One bounded step of every move under way (at most two accounts a run); a failing one is a log
 * line. Each step first takes the move's lease in the directory, reading the account as it is
 * then: two cron runs (or isolates) never step one move at once, so no step acts on a stale view.
 */
export async function continueMoves(directory: Db, env: Env, budgetMs = 20_000): Promise<void> {
  const free = (now: number) => or(isNull(accounts.moveLeaseUntil), lt(accounts.moveLeaseUntil, now));
  const moving = await directory
    .select({ id: accounts.id })
    .from(accounts)
    .where(and(isNotNull(accounts.moveState), free(Date.now())))
    .limit(fixedLimit(2));
  for (const { id } of moving) {
    const now = Date.now();
    const [account] = await directory
      .update(accounts)
      .set({ moveLeaseUntil: now + budgetMs + LEASE_MARGIN_MS })
      .where(and(eq(accounts.id, id), isNotNull(accounts.moveState), free(now)))
      .returning();
    if (!account) continue; // another step holds it
    try {
      await stepMove(directory, env, account, now + budgetMs);
    } catch (error) {
      console.error(JSON.stringify({ type: "move_error", account_id: account.id, from: account.shard, to: account.moveTo, error: String(error) }));
    } finally {
      await directory.update(accounts).set({ moveLeaseUntil: null }).where(eq(accounts.id, id));
    }
  }
}

async function stepMove(directory: Db, env: Env, account: Account, deadline: number): Promise<void> {
  if (account.moveState === "canceling") return stepCancel(directory, env, account);
  if (account.moveState === "cleaning") {
    // The directory points at the new shard already; the progress names the one left.
    const left: string = JSON.parse(account.moveProgress!).left;
    const binding = shardBinding(env, left);
    const arrived = shardBinding(env, account.shard);
    if (!binding || !arrived) shardNotConfigured(binding ? account.shard : left, { moving: account.id });
    else await leave(directory, binding, arrived, account.id);
    return;
  }
  if (account.moveTo === account.shard) {
    // Never copy a shard onto itself (a state no step writes: the switch sets `cleaning` with the shard).
    console.error(JSON.stringify({ type: "move_error", account_id: account.id, error: `a move to its own shard "${account.shard}" in state ${account.moveState}` }));
    return;
  }
  const from = shardBinding(env, account.shard);
  const to = shardBinding(env, account.moveTo!);
  if (!from || !to) {
    shardNotConfigured(from ? account.moveTo : account.shard, { moving: account.id });
    return;
  }
  let progress: Progress = account.moveProgress ? JSON.parse(account.moveProgress) : await arm(from, to, account.id, account.moveStartedAt!);
  let copied = 0;
  const save = () =>
    directory
      .update(accounts)
      .set({ moveProgress: JSON.stringify(progress), moveCopiedRows: (account.moveCopiedRows ?? 0) + copied })
      .where(eq(accounts.id, account.id));
  // At least one piece of work a step, however short its budget.
  do {
    if (progress.phase === "bulk") {
      const table = MOVED_TABLES[progress.table]!;
      const chunk = await copyChunk(from, to, table, account.id, progress.after, progress.upTo[progress.table]!);
      copied += chunk.copied;
      progress = chunk.last === null ? { ...progress, table: progress.table + 1, after: 0 } : { ...progress, after: chunk.last };
      if (progress.table === MOVED_TABLES.length) progress = { ...progress, phase: "log" };
      continue;
    }
    const replayed = await replayLog(from, to, account.id, progress.seq);
    copied += replayed.applied;
    progress = { ...progress, seq: replayed.lastSeq };
    if (replayed.applied >= NEARLY_CAUGHT_UP) continue;
    await save();
    await cutOver(directory, from, to, account, progress, deadline);
    return;
  } while (Date.now() < deadline);
  await save();
}

/**
 * Marks the copy as arriving on the new shard (nothing there acts on its rows until the cut-over),
 * then turns the source's triggers on for the account, noting each table's highest rowid: the bulk
 * copy's end.
 */
async function arm(from: D1Database, to: D1Database, accountId: string, startedAt: number): Promise<Progress> {
  await to.prepare("insert into moves (account_id, state, started_at) values (?1, 'arriving', ?2) on conflict (account_id) do update set state = 'arriving'").bind(accountId, startedAt).run();
  const [, ...highest] = await from.batch([
    from.prepare("insert into moves (account_id, state, started_at) values (?1, 'copying', ?2) on conflict (account_id) do update set state = 'copying'").bind(accountId, startedAt),
    ...MOVED_TABLES.map((table) => from.prepare(table.withoutRowid ? "select 0 as n" : `select coalesce(max(rowid), 0) as n from "${table.name}"`)),
  ]);
  return { phase: "bulk", table: 0, after: 0, upTo: highest.map((result) => Number((result!.results[0] as { n: number }).n)), seq: 0 };
}

const setSourceState = (from: D1Database, accountId: string, state: string) => from.prepare("update moves set state = ?2 where account_id = ?1").bind(accountId, state).run();
const setMoveState = (directory: Db, id: string, state: "copying" | "draining" | "frozen") => directory.update(accounts).set({ moveState: state }).where(eq(accounts.id, id));

/** Drains, freezes, checks and switches; false when the drain outlasted the step (the next run goes on). */
async function cutOver(directory: Db, from: D1Database, to: D1Database, account: Account, progress: Progress, deadline: number): Promise<boolean> {
  await setSourceState(from, account.id, "draining");
  await setMoveState(directory, account.id, "draining");
  const waitUntil = Math.min(deadline, Date.now() + DRAIN_WAIT_MS);
  while ((await inFlight(from, account.id)) > 0) {
    if (Date.now() > waitUntil) return false;
    await new Promise((done) => setTimeout(done, 200));
  }
  await setSourceState(from, account.id, "frozen");
  await setMoveState(directory, account.id, "frozen");
  try {
    for (let seq = progress.seq; ; ) {
      const replayed = await replayLog(from, to, account.id, seq);
      if (replayed.applied === 0) break;
      seq = replayed.lastSeq;
    }
    const [source, copy] = await Promise.all([fingerprint(from, account.id), fingerprint(to, account.id)]);
    const differs = MOVED_TABLES.filter((table) => JSON.stringify(source[table.name]) !== JSON.stringify(copy[table.name])).map((table) => table.name);
    if (differs.length > 0) throw new Error(`the copy differs from the source in ${differs.join(", ")}`);
    // The copy's pending deliveries are handed over by the new shard's next sweep (none is in flight).
    await to.prepare("update webhook_deliveries set enqueued_at = null, claimed_until = null, claim_token = null where account_id = ?1 and status = 'pending'").bind(account.id).run();
  } catch (error) {
    console.error(JSON.stringify({ type: "move_cutover_failed", account_id: account.id, error: String(error) }));
    // Back to copying from the start: writes work again, and every row is copied again. Its
    // deliveries handed over at their creation and never since, which the sweeper left alone while
    // the move held them (and its mark passed), become due: the sweeper's due walk has them again.
    await from.batch([
      from.prepare("update moves set state = 'copying' where account_id = ?1").bind(account.id),
      from.prepare("update webhook_deliveries set enqueued_at = null where account_id = ?1 and status = 'pending' and enqueued_at = created_at").bind(account.id),
    ]);
    await directory
      .update(accounts)
      .set({ moveState: "copying", moveProgress: JSON.stringify({ ...progress, phase: "bulk", table: 0, after: 0 }) })
      .where(eq(accounts.id, account.id));
    return false;
  }
  // The switch: from here on requests reach the new shard. (Cut short before it, the next step
  // drains and freezes again; after it, the clean-up goes on.)
  const [switched] = await directory
    .update(accounts)
    .set({ shard: account.moveTo!, moveState: "cleaning", moveProgress: JSON.stringify({ left: account.shard }) })
    .where(and(eq(accounts.id, account.id), eq(accounts.shard, account.shard), eq(accounts.moveState, "frozen")))
    .returning({ id: accounts.id });
  if (!switched) throw new Error("the directory's account changed under the cut-over");
  await handOff(from, to, account.id);
  return true;
}

/** The copy becomes the account's own (its pending deliveries go out with its shard's next sweep); the source refuses all but deletes. */
async function handOff(left: D1Database, arrived: D1Database, accountId: string): Promise<void> {
  // A new feed epoch where it arrives, once (with the arriving mark): cursors of the old shard expire.
  await arrived.batch([
    arrived.prepare("update tenants set epoch = ?2 where id = ?1 and exists (select 1 from moves where account_id = ?1 and state = 'arriving')").bind(accountId, crypto.randomUUID()),
    arrived.prepare("delete from moves where account_id = ?1 and state = 'arriving'").bind(accountId),
  ]);
  await setSourceState(left, accountId, "leaving");
}

/** Deliveries of the account whose attempt is under way on the source. */
async function inFlight(from: D1Database, accountId: string): Promise<number> {
  const row = await from
    .prepare("select count(*) as n from webhook_deliveries where account_id = ?1 and status = 'pending' and claimed_until > ?2")
    .bind(accountId, Date.now())
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/**
 * After the switch (a step after the cut-over, which hands off again should it have been cut short
 * there), the shard the account left loses its rows, a bounded step at a time; then the move is done.
 */
async function leave(directory: Db, left: D1Database, arrived: D1Database, accountId: string): Promise<void> {
  await handOff(left, arrived, accountId);
  const removed = await removeAccountRows(createDb(left), accountId, { pause: false });
  if (removed > 0) return;
  await left.batch([left.prepare("delete from move_log where account_id = ?1").bind(accountId), left.prepare("delete from moves where account_id = ?1").bind(accountId)]);
  await directory
    .update(accounts)
    .set({ moveTo: null, moveState: null, moveStartedAt: null, moveCopiedRows: null, moveProgress: null })
    .where(eq(accounts.id, accountId));
}

/** Whether an error is a write refused because its account is being moved (the source shard's triggers). */
export function isMoving(error: unknown): boolean {
  if (error instanceof AppError) return false;
  for (let each: unknown = error; each; each = (each as { cause?: unknown }).cause) {
    if (/account is moving/.test(String((each as Error)?.message ?? each))) return true;
  }
  return false;
}

