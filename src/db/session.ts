/**
 * The D1 an API request works in: a session of D1's Sessions API that starts at the primary
 * ("first-primary"). The request's first query, the credential check, is answered by the primary,
 * so a rotated password stops working at once; every later query of the session may be served by a
 * read replica at least as new as what the primary had then, so a client always reads its own
 * writes, and a poll sees every change committed before it. Without read replication turned on
 * (and locally) every query goes to the primary. The queue consumer and the cron use the binding
 * itself: the primary. Drizzle takes a session as it takes the binding.
 */
export function requestSession(d1: D1Database): D1Database {
  return d1.withSession("first-primary") as unknown as D1Database;
}
