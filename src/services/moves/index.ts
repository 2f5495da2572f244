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
 *   log      the log is applied: each logged row as it is now (upserted, or deleted when gone).
 *   drain    when the log is nearly caught up: no new delivery leases for the account, and the
 *            step waits until none of its attempts is in flight (so none is sent twice).
 *   freeze   every write of the account's rows on the source fails (503 `Account is moving`) for
 *            the few statements that follow: the last of the log is applied, both shards must
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
import { createDb, runNamedD1Batch } from "../../db/client";
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
import { applyLog, copyChunk, fingerprint, type CopyCursor } from "./copy";
import { MOVED_TABLES } from "./tables";
import { isBudgetSpent } from "../../lib/run-budget";

/** Where a copy stands: the bulk copy's table and place in it, each table's highest rowid when it began, and the log applied so far. */
interface Progress {
  phase: "bulk" | "log";
  table: number;
  after: CopyCursor;
  upTo: number[];
  seq: number;
}

/** Log entries left when the drain starts: the freeze then applies at most about this many. */
const NEARLY_CAUGHT_UP = 200;
/** How long a step waits for the account's attempts in flight to end before it tries again next run, and how often it looks. */
const DRAIN_WAIT_MS = 10_000;
const DRAIN_POLL_MS = 500;
/** Log entries one apply at the freeze reads, and how many applies a freeze makes at most. */
const FREEZE_APPLY_ENTRIES = 500;
const FREEZE_APPLIES = 4;

export const MOVING = "Account is moving; retry shortly.";
export const MOVING_RETRY_AFTER_S = 2;
export { cancelMove } from "./cancel";

/** Starts moving an account to shard `to`: 202 and the account, its `move` showing the copy. */
export async function startMove(directory: Db, env: Env, id: string, to: string, now = Date.now()): Promise<Account> {
  const account = await getAccount(directory, id);
  if (account.moveState) throw conflict("The account is already moving.");
  if (account.shard === to) throw invalidField("shard", `The account is already on shard "${to}".`);
  // A move out of a shard the configuration lacks could never copy a row: refused as a move into one is.
  if (!shardBinding(env, account.shard))
    throw invalidField("shard", `The account's shard "${account.shard}" is not configured: nothing can be moved out of it.`);
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
 * D1 queries of one apply of the log (copy.ts, `applyLog`, FREEZE_APPLY_ENTRIES entries): a read
 * of the log and, per table touched, a read of sizes, of rows, a write and a delete, for rows
 * within one read's bytes. Larger rows take more: every apply at the freeze first checks its room.
 */
const APPLY_QUERIES = 1 + MOVED_TABLES.length * 4;
/** D1 queries of the cut-over after its applies: both fingerprints, the hand-over of its deliveries, the switch and the hand-off. */
const AFTER_APPLIES = 2 * MOVED_TABLES.length + 1 + 1 + 3;
/** D1 queries of the cut-over but its applies: the drain's checks (one each DRAIN_POLL_MS for DRAIN_WAIT_MS), the state changes, and what follows the applies. */
const CUTOVER_FIXED = 2 + (DRAIN_WAIT_MS / DRAIN_POLL_MS + 1) + 2 + AFTER_APPLIES;
/**
 * What the cut-over spends in D1 queries at most (the cron's run budget, lib/run-budget.ts), with
 * FREEZE_APPLIES applies at the freeze; and the least room a step starts one with, for one apply.
 * Each apply at the freeze checks its room first: a cut-over that runs out (more changes came in
 * while it drained than the room applies, or rows so large the applies outgrow it) goes back to
 * copying (bookkeeping) and tries again later, never leaving the account frozen.
 */
export const CUTOVER_QUERIES = CUTOVER_FIXED + FREEZE_APPLIES * APPLY_QUERIES;
const CUTOVER_LEAST = CUTOVER_FIXED + APPLY_QUERIES;
/**
 * The cron's floor and reserve for moves. The floor is a step's smallest whole unit for a busy
 * account: the lease, a minute's catch-up of its log (two applies) and the cut-over, which must
 * follow the catch-up in the same step or the account's writes outrun it. The reserve is the
 * bookkeeping after a step's last piece of work: a progress save, the lease's release, and the
 * return to copying of a cut-over cut short (three statements).
 */
export const MOVE_STEP = { floor: 2 + 2 * APPLY_QUERIES + CUTOVER_QUERIES, reserve: 5 };

/** What a step of one move did: the log's view of its progress, run by run. */
export interface MoveReport {
  account_id: string;
  state: string;
  copied_rows: number;
  /** Where the copy stands: `bulk <table>`, `log <seq>`, or the step's end (`switched`, `left`, …). */
  at: string;
  stopped?: "budget" | "no room for the cut-over" | "drain";
}

interface MoveOptions {
  /** How long a step copies before it saves and ends. */
  budgetMs?: number;
  /** The same bindings for the bookkeeping that must run whatever the budget (the cron's, lib/run-budget.ts). */
  bookkeeping?: Env;
  /** D1 queries the step's work may still spend. */
  room?: () => number;
}

/**
 * One bounded step of every move under way (at most two accounts a run); a failing one is a log
 * line. Each step first takes the move's lease in the directory, reading the account as it is
 * then: two cron runs (or isolates) never step one move at once, so no step acts on a stale view.
 * The lease's release is bookkeeping: a step stopped by its budget frees the move for the next run.
 */
export async function continueMoves(
  directory: Db,
  env: Env,
  { budgetMs = 20_000, bookkeeping = env, room = () => Infinity }: MoveOptions = {},
): Promise<MoveReport[]> {
  const free = (now: number) => or(isNull(accounts.moveLeaseUntil), lt(accounts.moveLeaseUntil, now));
  const kept = createDb(bookkeeping.DB);
  const reports: MoveReport[] = [];
  try {
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
        const report = await stepMove(directory, env, account, { deadline: now + budgetMs, bookkeeping, kept, room });
        if (report) reports.push(report);
        if (report?.stopped === "budget") break;
      } catch (error) {
        console.error(JSON.stringify({ type: "move_error", account_id: account.id, from: account.shard, to: account.moveTo, error: String(error) }));
      } finally {
        await kept.update(accounts).set({ moveLeaseUntil: null }).where(eq(accounts.id, id));
      }
    }
  } catch (error) {
    if (!isBudgetSpent(error)) throw error;
  }
  return reports;
}

async function stepMove(
  directory: Db,
  env: Env,
  account: Account,
  { deadline, bookkeeping, kept, room }: Required<Omit<MoveOptions, "budgetMs">> & { deadline: number; kept: Db },
): Promise<MoveReport | null> {
  const report = (at: string, copied = account.moveCopiedRows ?? 0, stopped?: MoveReport["stopped"]): MoveReport => ({
    account_id: account.id,
    state: account.moveState!,
    copied_rows: copied,
    at,
    ...(stopped ? { stopped } : {}),
  });
  try {
    if (account.moveState === "canceling") {
      await stepCancel(directory, env, account);
      return report("canceling");
    }
    if (account.moveState === "leaving") {
      // The directory points at the new shard already; the progress names the one left.
      const left: string = JSON.parse(account.moveProgress!).left;
      const binding = shardBinding(env, left);
      const arrived = shardBinding(env, account.shard);
      if (!binding || !arrived) shardNotConfigured(binding ? account.shard : left, { moving: account.id });
      else await leave(directory, binding, arrived, account.id);
      return report("leaving");
    }
  } catch (error) {
    if (!isBudgetSpent(error)) throw error;
    return report(account.moveState!, undefined, "budget");
  }
  if (account.moveTo === account.shard) {
    // Never copy a shard onto itself (a state no step writes: the switch sets `leaving` with the shard).
    console.error(
      JSON.stringify({ type: "move_error", account_id: account.id, error: `a move to its own shard "${account.shard}" in state ${account.moveState}` }),
    );
    return null;
  }
  const from = shardBinding(env, account.shard);
  const to = shardBinding(env, account.moveTo!);
  if (!from || !to) {
    shardNotConfigured(from ? account.moveTo : account.shard, { moving: account.id });
    return null;
  }
  let copied = account.moveCopiedRows ?? 0;
  let progress: Progress | null = account.moveProgress ? JSON.parse(account.moveProgress) : null;
  const at = () => (progress === null ? "arming" : progress.phase === "bulk" ? `bulk ${MOVED_TABLES[progress.table]?.name ?? "done"}` : `log ${progress.seq}`);
  // Progress is kept where it is made: saved after each chunk, as bookkeeping (never refused).
  const save = () =>
    kept
      .update(accounts)
      .set({ moveProgress: JSON.stringify(progress), moveCopiedRows: copied })
      .where(eq(accounts.id, account.id));
  try {
    if (progress === null) {
      progress = await arm(from, to, account.id, account.moveStartedAt!);
      await save();
    }
    // At least one piece of work a step, however short its time.
    do {
      if (progress.phase === "bulk") {
        const table = MOVED_TABLES[progress.table]!;
        const chunk = await copyChunk(from, to, table, account.id, progress.after, progress.upTo[progress.table]!);
        copied += chunk.copied;
        progress = chunk.last === null ? { ...progress, table: progress.table + 1, after: 0 } : { ...progress, after: chunk.last };
        if (progress.table === MOVED_TABLES.length) progress = { ...progress, phase: "log" };
        await save();
        continue;
      }
      const log = await applyLog(from, to, account.id, progress.seq);
      copied += log.applied;
      progress = { ...progress, seq: log.lastSeq };
      await save();
      if (log.applied >= NEARLY_CAUGHT_UP) continue;
      if (room() < CUTOVER_LEAST) return report(at(), copied, "no room for the cut-over");
      const over = await cutOver(
        directory,
        from,
        to,
        account,
        progress,
        deadline,
        { directory: kept, source: shardBinding(bookkeeping, account.shard)! },
        room,
      );
      return report(over, copied, over === "drain" ? "drain" : undefined);
    } while (Date.now() < deadline);
    return report(at(), copied);
  } catch (error) {
    if (!isBudgetSpent(error)) throw error;
    return report(at(), copied, "budget");
  }
}

/**
 * Marks the copy as arriving on the new shard (nothing there acts on its rows until the cut-over),
 * then turns the source's triggers on for the account, noting each table's highest rowid: the bulk
 * copy's end.
 */
async function arm(from: D1Database, to: D1Database, accountId: string, startedAt: number): Promise<Progress> {
  await to
    .prepare("insert into moves (account_id, state, started_at) values (?1, 'arriving', ?2) on conflict (account_id) do update set state = 'arriving'")
    .bind(accountId, startedAt)
    .run();
  const { highest } = await runNamedD1Batch(from, {
    armed: from
      .prepare("insert into moves (account_id, state, started_at) values (?1, 'copying', ?2) on conflict (account_id) do update set state = 'copying'")
      .bind(accountId, startedAt),
    highest: MOVED_TABLES.map((table) => from.prepare(table.withoutRowid ? "select 0 as n" : `select coalesce(max(rowid), 0) as n from "${table.name}"`)),
  });
  return { phase: "bulk", table: 0, after: 0, upTo: highest.map((result) => Number((result!.results[0] as { n: number }).n)), seq: 0 };
}

const setSourceState = (from: D1Database, accountId: string, state: string) =>
  from.prepare("update moves set state = ?2 where account_id = ?1").bind(accountId, state).run();
const setMoveState = (directory: Db, id: string, state: "copying" | "draining" | "frozen") =>
  directory.update(accounts).set({ moveState: state }).where(eq(accounts.id, id));

/**
 * Drains, freezes, checks and switches: "switched", or where it stopped ("drain": attempts still
 * in flight; "copying": the check or the budget sent it back). Before the switch, anything that
 * stops it puts the account back to copying, as bookkeeping (`kept`), so its writes never stay
 * refused; after it, the next step's clean-up goes on.
 */
async function cutOver(
  directory: Db,
  from: D1Database,
  to: D1Database,
  account: Account,
  progress: Progress,
  deadline: number,
  kept: { directory: Db; source: D1Database },
  room: () => number,
): Promise<"switched" | "drain" | "copying"> {
  let seq = progress.seq;
  const back = async (restart: boolean) => {
    // Writes work again. Its deliveries handed over at their creation and never since, which the
    // sweeper left alone while the move held them (and its mark passed), become due: the
    // sweeper's due walk has them again. After a failed check, every row is copied again.
    await runNamedD1Batch(kept.source, {
      copying: kept.source.prepare("update moves set state = 'copying' where account_id = ?1").bind(account.id),
      due: kept.source
        .prepare("update webhook_deliveries set enqueued_at = null where account_id = ?1 and status = 'pending' and enqueued_at = created_at")
        .bind(account.id),
    });
    const resumed = restart ? { ...progress, phase: "bulk" as const, table: 0, after: 0 } : { ...progress, seq };
    await kept.directory
      .update(accounts)
      .set({ moveState: "copying", moveProgress: JSON.stringify(resumed) })
      .where(eq(accounts.id, account.id));
  };
  try {
    await setSourceState(from, account.id, "draining");
    await setMoveState(directory, account.id, "draining");
    const waitUntil = Math.min(deadline, Date.now() + DRAIN_WAIT_MS);
    while ((await inFlight(from, account.id)) > 0) {
      if (Date.now() > waitUntil) return "drain";
      await new Promise((done) => setTimeout(done, DRAIN_POLL_MS));
    }
    await setSourceState(from, account.id, "frozen");
    await setMoveState(directory, account.id, "frozen");
    for (let applies = 0; ; applies++) {
      // Room for this apply and what follows it, or back to copying while writes work.
      if (room() < APPLY_QUERIES + AFTER_APPLIES) throw new Error("no room left in the run for the freeze's apply of the log");
      const log = await applyLog(from, to, account.id, seq, FREEZE_APPLY_ENTRIES);
      seq = log.lastSeq;
      if (log.applied < FREEZE_APPLY_ENTRIES) break;
      // More came in while it drained than a freeze applies: back to copying, to catch up first.
      if (applies + 1 === FREEZE_APPLIES) throw new Error(`more than ${FREEZE_APPLIES * FREEZE_APPLY_ENTRIES} changes to apply at the freeze`);
    }
    const [source, copy] = await Promise.all([fingerprint(from, account.id), fingerprint(to, account.id)]);
    const differs = MOVED_TABLES.filter((table) => JSON.stringify(source[table.name]) !== JSON.stringify(copy[table.name])).map((table) => table.name);
    if (differs.length > 0) {
      console.error(
        JSON.stringify({ type: "move_cutover_failed", account_id: account.id, error: `the copy differs from the source in ${differs.join(", ")}` }),
      );
      await back(true);
      return "copying";
    }
    // The copy's pending deliveries are handed over by the new shard's next sweep (none is in flight).
    await to
      .prepare("update webhook_deliveries set enqueued_at = null, leased_until = null, lease_token = null where account_id = ?1 and status = 'pending'")
      .bind(account.id)
      .run();
  } catch (error) {
    console.error(JSON.stringify({ type: "move_cutover_failed", account_id: account.id, error: String(error) }));
    await back(false);
    if (isBudgetSpent(error)) throw error;
    return "copying";
  }
  // The switch: from here on requests reach the new shard. (Cut short before it, the next step
  // drains and freezes again; after it, the clean-up goes on.)
  const [switched] = await directory
    .update(accounts)
    .set({ shard: account.moveTo!, moveState: "leaving", moveProgress: JSON.stringify({ left: account.shard }) })
    .where(and(eq(accounts.id, account.id), eq(accounts.shard, account.shard), eq(accounts.moveState, "frozen")))
    .returning({ id: accounts.id });
  if (!switched) throw new Error("the directory's account changed under the cut-over");
  await handOff(from, to, account.id);
  return "switched";
}

/** The copy becomes the account's own (its pending deliveries go out with its shard's next sweep); the source refuses all but deletes. */
async function handOff(left: D1Database, arrived: D1Database, accountId: string): Promise<void> {
  // A new feed epoch where it arrives, once (with the arriving mark): cursors of the old shard expire.
  await runNamedD1Batch(arrived, {
    epoch: arrived
      .prepare("update tenants set epoch = ?2 where id = ?1 and exists (select 1 from moves where account_id = ?1 and state = 'arriving')")
      .bind(accountId, crypto.randomUUID()),
    arrived: arrived.prepare("delete from moves where account_id = ?1 and state = 'arriving'").bind(accountId),
  });
  await setSourceState(left, accountId, "leaving");
}

/** Deliveries of the account whose attempt is under way on the source. */
async function inFlight(from: D1Database, accountId: string): Promise<number> {
  const row = await from
    .prepare("select count(*) as n from webhook_deliveries where account_id = ?1 and status = 'pending' and leased_until > ?2")
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
  await runNamedD1Batch(left, {
    log: left.prepare("delete from move_log where account_id = ?1").bind(accountId),
    move: left.prepare("delete from moves where account_id = ?1").bind(accountId),
  });
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
