import { createDb, type Db } from "./client";
import { countingD1, type D1Tally } from "./counting-d1";

/**
 * The D1 an API request works in, per database it touches (the directory, then its shard): a
 * session of D1's Sessions API. The directory's starts at the primary ("first-primary"): its first
 * query, the credential check, is answered by the primary, so a rotated password stops working at
 * once. The shard's starts where lib/bookmark.ts says (a write at the primary; a read at a replica,
 * as new as the client's bookmark asks). Every later query of a session sees at least what the
 * ones before it saw. Without read replication turned on (and locally) every query goes to the
 * primary. The queue consumer and the cron use the bindings themselves: the primaries. Drizzle
 * takes a session as it takes the binding.
 */
export interface RequestSession {
  db: Db;
  /** D1's bookmark of the latest query the session ran; null before its first. */
  bookmark(): string | null;
}

/** A session of `d1` from `constraint` for one request; with a tally (SERVER_TIMING), every statement's cost is added to it. */
export function requestSession(d1: D1Database, constraint = "first-primary", tally?: D1Tally): RequestSession {
  const session = d1.withSession(constraint as D1SessionConstraint) as unknown as D1Database;
  const counted = tally ? countingD1(session, tally).db : session;
  return {
    db: createDb(counted),
    bookmark: () => (session as unknown as D1DatabaseSession).getBookmark(),
  };
}
