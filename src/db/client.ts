import { drizzle } from "drizzle-orm/d1";

/**
 * The query builder over a D1 binding. No schema is passed: the service uses query builders only
 * (no relational queries), and building the relational config costs every request CPU.
 */
export function createDb(d1: D1Database) {
  return drizzle(d1);
}

export type Db = ReturnType<typeof createDb>;

export type BatchStatement = Parameters<Db["batch"]>[0][number];

/** Runs statements as one D1 batch (one round trip, all or nothing); an empty list runs nothing. */
export async function runBatch(db: Db, statements: BatchStatement[]): Promise<unknown[]> {
  if (statements.length === 0) return [];
  return db.batch(statements as [BatchStatement, ...BatchStatement[]]);
}
