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
  return byName(parts, results) as NamedResults<P>;
}

/** The same for prepared statements of a D1 binding itself (a move's copy works on the bindings): each name's D1Result, or their list. */
export async function runNamedD1Batch<P extends Record<string, D1PreparedStatement | readonly D1PreparedStatement[]>>(
  d1: D1Database,
  parts: P,
): Promise<{ [K in keyof P]: P[K] extends readonly unknown[] ? D1Result[] : D1Result }> {
  const names = Object.keys(parts) as (keyof P & string)[];
  const results = await d1.batch(names.flatMap((name) => parts[name] as D1PreparedStatement | D1PreparedStatement[]));
  return byName(parts, results) as { [K in keyof P]: P[K] extends readonly unknown[] ? D1Result[] : D1Result };
}

/** A batch's results by the names of its parts, in the order they were named. */
function byName(parts: Record<string, unknown>, results: readonly unknown[]): Record<string, unknown> {
  let at = 0;
  const named: Record<string, unknown> = {};
  for (const [name, part] of Object.entries(parts)) {
    const size = Array.isArray(part) ? part.length : 1;
    named[name] = Array.isArray(part) ? results.slice(at, at + size) : results[at];
    at += size;
  }
  return named;
}
