/**
 * An Idempotency-Key as a named part of a write's own batch (docs/interface.md, "Safe retries"). A
 * verb puts `claim` at the front of its batch (under the name `key`), requires `owns` in its first
 * write, and adds `answer` after its writes; after the batch, `decided` reads the key's row from
 * the claim's results: null when the request ran, or what it answers instead (the stored answer, a
 * 422 or a 409), which the verb returns as a value (`Keyed`). A request without a key gets
 * UNKEYED, whose parts add nothing. A route that must read before it writes claims the key in a
 * round trip of its own first (`claimKey`), and its verb's `claim` only reads the row back.
 */
import { sql, type SQL } from "drizzle-orm";
import { runNamedBatch, type BatchStatement, type Db } from "../db/client";
import { decide, type Decision } from "./decision";
import { claimStatements, keyRowStatement, ownsSql, storedKey, type RequestKey, type StoredKey } from "./store";

/** What a request with a key that is not its own answers instead of running. */
export interface KeyDecision {
  decision: Exclude<Decision, "run">;
  row: StoredKey;
}

/** A keyed verb's outcome: what it made, or what its key decided instead. */
export type Keyed<T> = { ran: T } | { decided: KeyDecision };

/** The key's parts of a verb's batch. */
export interface KeyedWrite<T> {
  /** For the front of the batch, named `key`: the claim (or, once claimed, the read of the key's row), its row read last. */
  claim: BatchStatement[];
  /** Whether the key is the request's and unanswered, as SQL: the verb's first write requires it. */
  owns: SQL;
  /** The statements that store the verb's answer, made from `value`, with the key, where `guard` holds. */
  answer(value: T, guard?: SQL): Promise<BatchStatement[]>;
  /** From the `key` part's results: null when the request runs, else what it answers instead. */
  decided(results: readonly unknown[]): KeyDecision | null;
}

/** A request without a key: nothing to claim, nothing to store, every write its own. */
export const UNKEYED: KeyedWrite<never> = { claim: [], owns: sql`1`, answer: async () => [], decided: () => null };

/** What the key's row says the request does: null to run, else its decision. Pure. */
export function decisionOf(key: RequestKey, row: StoredKey | undefined): KeyDecision | null {
  if (!row) return null;
  const decision = decide(row, key);
  return decision === "run" ? null : { decision, row };
}

/**
 * The key's parts of a verb's batch, for `key`; `store` makes the answer's statements from the
 * verb's value. `claimed`: the route claimed the key already, so the batch only reads it back.
 */
export function keyedWrite<T>(db: Db, key: RequestKey, store: (value: T, guard?: SQL) => Promise<BatchStatement[]>, { claimed = false } = {}): KeyedWrite<T> {
  return {
    claim: claimed ? [keyRowStatement(db, key)] : [...claimStatements(db, key, Date.now())],
    owns: ownsSql(key),
    answer: store,
    decided: (results) => decisionOf(key, storedKey((results.at(-1) ?? []) as StoredKey[])),
  };
}

/** Claims the key in a round trip of its own, for a route that reads before it writes: null to run, else its decision. */
export async function claimKey(db: Db, key: RequestKey): Promise<KeyDecision | null> {
  const { claim } = await runNamedBatch(db, { claim: [...claimStatements(db, key, Date.now())] });
  return decisionOf(key, storedKey(claim.at(-1) as StoredKey[]));
}
