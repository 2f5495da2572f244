import { createDb, type Db } from "./client";
import { countingD1, type D1Tally } from "../dev";

/**
 * The D1 an API request works in, per database it touches (the directory, then its shard): a
 * session of D1's Sessions API that starts at the primary ("first-primary"). The directory's first
 * query, the credential check, is answered by the primary, so a rotated password stops working at
 * once; every later query of a session may be served by a read replica at least as new as what the
 * primary had then, so a client always reads its own writes, and a poll sees every change committed
 * before it. Without read replication turned on (and locally) every query goes to the primary. The
 * queue consumer and the cron use the bindings themselves: the primaries. Drizzle takes a session
 * as it takes the binding.
 */
export function requestSession(d1: D1Database): D1Database {
  return d1.withSession("first-primary") as unknown as D1Database;
}

/** A request's query builder over `d1`'s session; with a tally (SERVER_TIMING), every statement's cost is added to it. */
export function requestDb(d1: D1Database, tally?: D1Tally): Db {
  const session = requestSession(d1);
  return createDb(tally ? countingD1(session, tally).db : session);
}
