/**
 * Endpoint ownership (docs/interface.md, "Endpoint ownership"): where an account requires it, a
 * new subscription, and one whose URL changes, is `pending` until its receiver answers a signed
 * challenge with `{"challenge": "<the same>"}` and a 2xx within CHALLENGE_TIMEOUT_MS; meanwhile its
 * deliveries are held (schema's `sends`). A failed challenge is sent again on the retry schedule
 * for 3 days, then the subscription is `failed`. The decisions are pure and stated here; the
 * challenge itself is sent by delivery/challenge.ts.
 */
import { and, eq, lte, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { fixedLimit } from "../../db/fixed-limit";
import { equalsLiteral } from "../../db/literal";
import { webhookSubscriptions, type SubscriptionRow, type Verification } from "../../db/schema";
import { conflict, notFound } from "../../errors";
import { constantTimeEqual } from "../../lib/crypto";
import { GIVE_UP_AFTER_MS, nextRetryDelay } from "../wire/retry-schedule";
import { selectSubscription, updateSubscriptionRow } from "./statements";

/** How long a receiver has to answer a challenge. */
export const CHALLENGE_TIMEOUT_MS = 10_000;
/** How long a subscription's challenges go on before it is `failed`: the retry schedule's 3 days. */
export const VERIFY_FOR_MS = GIVE_UP_AFTER_MS;
/** The challenge's `type`, and its `hook-event`. */
export const CHALLENGE_EVENT = "webhook.verification";

/** A challenge's body. */
export function challengeBody(challenge: string): string {
  return JSON.stringify({ type: CHALLENGE_EVENT, challenge });
}

/** A subscription's verification columns. */
export type VerificationColumns = Pick<SubscriptionRow, "verification" | "verificationStartedAt" | "verificationAttempts" | "verificationNextAt">;

/** The columns of a subscription made, or given a new URL, at `now`: a run of challenges starts when the account requires one. Pure. */
export function verificationStarts(required: boolean, now: number): VerificationColumns {
  return required
    ? { verification: "pending", verificationStartedAt: now, verificationAttempts: 0, verificationNextAt: now }
    : { verification: "not_required", verificationStartedAt: null, verificationAttempts: 0, verificationNextAt: null };
}

/**
 * Why an answer does not prove ownership, or null when it does: a 2xx whose body is JSON with
 * `challenge` equal to the one sent. Pure.
 */
export function refusalOf(status: number | null, answer: string | null, challenge: string): string | null {
  if (status === null) return "no answer";
  if (status < 200 || status > 299) return `HTTP ${status}`;
  let echoed: unknown;
  try {
    echoed = (JSON.parse(answer ?? "") as { challenge?: unknown })?.challenge;
  } catch {
    return "the answer is not JSON";
  }
  if (typeof echoed !== "string") return "the answer has no challenge";
  return constantTimeEqual(echoed, challenge) ? null : "the answer's challenge is not the one sent";
}

/**
 * The columns after a challenge sent at `now` (the run's `startedAt`, `attempts` before it): verified,
 * or the next challenge on the retry schedule, or `failed` once that runs past VERIFY_FOR_MS. Pure.
 */
export function afterChallenge(run: { startedAt: number; attempts: number }, refusal: string | null, now: number, random: () => number): VerificationColumns {
  const attempts = run.attempts + 1;
  if (refusal === null) return { verification: "verified", verificationStartedAt: run.startedAt, verificationAttempts: attempts, verificationNextAt: null };
  const delay = nextRetryDelay({ attempts, scheduleStartedAt: run.startedAt, now, random });
  return delay === null
    ? { verification: "failed", verificationStartedAt: run.startedAt, verificationAttempts: attempts, verificationNextAt: null }
    : { verification: "pending", verificationStartedAt: run.startedAt, verificationAttempts: attempts, verificationNextAt: now + delay * 1000 };
}

/** Writes a challenge's outcome, only if the run it belongs to is still the subscription's (a URL change since starts another); returns the row if it did. */
export function recordChallenge(db: Db, id: string, startedAt: number, columns: VerificationColumns, now: number) {
  const s = webhookSubscriptions;
  return db
    .update(s)
    .set({ ...columns, updatedAt: now })
    .where(and(eq(s.id, id), equalsLiteral(s.verification, "pending"), eq(s.verificationStartedAt, startedAt)))
    .returning({ id: s.id, accountId: s.accountId, verification: s.verification });
}

/** Marks the subscription's challenge sent at `now` as under way: the next is due only after it could have ended (no other run sends it meanwhile). */
export function takeChallenge(db: Db, id: string, startedAt: number, now: number) {
  const s = webhookSubscriptions;
  return db
    .update(s)
    .set({ verificationNextAt: now + 2 * CHALLENGE_TIMEOUT_MS })
    .where(and(eq(s.id, id), equalsLiteral(s.verification, "pending"), eq(s.verificationStartedAt, startedAt), lte(s.verificationNextAt, now)))
    .returning({ id: s.id });
}

/** Reads the subscriptions whose challenge is due at `now`, `limit` at most, on their partial index. */
export function selectDueChallenges(db: Db, now: number, limit: number) {
  const s = webhookSubscriptions;
  return db
    .select()
    .from(s)
    .where(and(sql`${s.verification} = 'pending'`, lte(s.verificationNextAt, now)))
    .orderBy(s.verificationNextAt)
    .limit(fixedLimit(limit));
}

/** The verification columns a run started again by `POST …/verify/` sets (a `failed` one gets a new 3 days). Pure. */
export function verifyAgain(
  current: Verification,
  now: number,
  row: { verificationStartedAt: number | null; verificationAttempts: number },
): VerificationColumns {
  return current === "failed" || row.verificationStartedAt === null
    ? verificationStarts(true, now)
    : { verification: "pending", verificationStartedAt: row.verificationStartedAt, verificationAttempts: row.verificationAttempts, verificationNextAt: now };
}

export const NOT_REQUIRED =
  "The account does not require proof of endpoint ownership for this subscription (verification: not_required): its deliveries go out as they are.";

/**
 * `POST …/verify/`: the subscription's challenge is due now (a `failed` one starts a new 3 days);
 * 409 where no proof is required. Answers the row as it is then, for the route to send the challenge.
 */
export async function verifyNow(db: Db, accountId: string, id: string, now = Date.now()): Promise<SubscriptionRow> {
  const row = await selectSubscription(db, accountId, id).get();
  if (!row) throw notFound();
  if (row.verification === "not_required") throw conflict(NOT_REQUIRED);
  if (row.verification === "verified") return row;
  const [updated] = await updateSubscriptionRow(db, accountId, id, { ...verifyAgain(row.verification, now, row), updatedAt: now });
  if (!updated) throw notFound();
  return updated;
}
