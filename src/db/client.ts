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

/** What a batch of named statements answers: each name's result, or a list of results for a list. */
export type NamedResults<P> = { [K in keyof P]: P[K] extends readonly (infer S)[] ? Awaited<S>[] : Awaited<P[K]> };

/**
 * Runs statements given by name as one D1 batch, in the order they are named, and answers each
 * one's result by its name: a batch whose parts say what they are, read without positions.
 */
export async function runNamedBatch<P extends Record<string, BatchStatement | readonly BatchStatement[]>>(db: Db, parts: P): Promise<NamedResults<P>> {
  const names = Object.keys(parts) as (keyof P & string)[];
  const results = await runBatch(
    db,
    names.flatMap((name) => parts[name] as BatchStatement | BatchStatement[]),
  );
  let at = 0;
  const named = {} as Record<string, unknown>;
  for (const name of names) {
    const part = parts[name];
    const size = Array.isArray(part) ? part.length : 1;
    named[name] = Array.isArray(part) ? results.slice(at, at + size) : results[at];
    at += size;
  }
  return named as NamedResults<P>;
}
