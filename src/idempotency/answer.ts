import type { SQL } from "drizzle-orm";
import type { BatchStatement } from "../db/client";

/**
 * What a write verb puts in its batch so that its answer is stored with the request's
 * Idempotency-Key: given what the verb wrote (and, optionally, the condition under which its
 * batch applies), the statements to add. Routes make it (routes/common.ts `keyedAnswer`); without
 * a key it adds nothing.
 */
export type Answer<T> = (value: T, guard?: SQL) => Promise<BatchStatement[]>;

export const noAnswer: Answer<unknown> = async () => [];
