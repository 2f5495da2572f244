import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export function createDb(d1: D1Database) {
  return drizzle(d1, { schema });
}

export type Db = ReturnType<typeof createDb>;

export type BatchStatement = Parameters<Db["batch"]>[0][number];

/** Runs statements as one D1 batch (one round trip, all or nothing); an empty list runs nothing. */
export async function runBatch(db: Db, statements: BatchStatement[]): Promise<unknown[]> {
  if (statements.length === 0) return [];
  return db.batch(statements as [BatchStatement, ...BatchStatement[]]);
}
