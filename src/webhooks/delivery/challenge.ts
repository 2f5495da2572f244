/**
 * Sends an endpoint-ownership challenge (subscriptions/verification.ts) and records what came of
 * it: signed and authenticated like a delivery, POSTed with CHALLENGE_TIMEOUT_MS to answer, of
 * which ANSWER_READ_BYTES at most are read. A proven subscription's held deliveries are released
 * in the batch that records it, and handed to the queue in sequence order (the cron releases the
 * rest: upkeep/releases.ts).
 */
import { runNamedBatch, type Db } from "../../db/client";
import { sends, type SubscriptionRow } from "../../db/schema";
import { base64url } from "../../lib/crypto";
import { refuseWebhookUrl } from "../../lib/url-policy";
import type { ShardQueue } from "../outbox/message";
import { inSequence, releaseHeld, settleAcked } from "../subscriptions/holds";
import { openSecrets } from "../subscriptions/opened-secrets";
import { signingSecrets, UNREADABLE } from "../subscriptions/subscriptions";
import {
  afterChallenge,
  CHALLENGE_EVENT,
  CHALLENGE_TIMEOUT_MS,
  challengeBody,
  recordChallenge,
  refusalOf,
  selectDueChallenges,
  takeChallenge,
} from "../subscriptions/verification";
import { handOver } from "../outbox/outbox";
import { requestHeaders } from "../wire/request-headers";
import { answerStart } from "./attempt";

/** Challenges one cron run sends on a shard at most, side by side (each within CHALLENGE_TIMEOUT_MS): fewer than a Worker's connections. */
export const CHALLENGES_AT_ONCE = 4;

export interface ChallengeSettings {
  encryptionKey: string | undefined;
  allowLocalUrls: boolean;
}

/**
 * Sends the subscription's challenge now, if one of its run is due (taken first, so that no other
 * invocation sends it meanwhile), and records the outcome; answers where its verification stands.
 */
export async function sendChallenge(db: Db, queue: ShardQueue, row: SubscriptionRow, settings: ChallengeSettings, now = Date.now()): Promise<string> {
  if (row.verification !== "pending" || row.verificationStartedAt === null) return row.verification;
  const startedAt = row.verificationStartedAt;
  if ((await takeChallenge(db, row.id, startedAt, now)).length === 0) return row.verification;
  const refusal = await challenge(row, settings);
  const columns = afterChallenge({ startedAt, attempts: row.verificationAttempts }, refusal, Date.now(), Math.random);
  const proven = columns.verification === "verified";
  const batch = await runNamedBatch(db, {
    recorded: recordChallenge(db, row.id, startedAt, columns, Date.now()),
    // Proven: what it held goes out, as on a resume (a paused one's stays held).
    settled: proven ? [settleAcked(db, row.accountId, row.id, now)] : [],
    released: proven ? [releaseHeld(db, row.accountId, row.id, now)] : [],
  });
  console.log(
    JSON.stringify({
      type: "endpoint_challenge",
      subscription_id: row.id,
      account_id: row.accountId,
      verification: columns.verification,
      attempt: columns.verificationAttempts,
      refusal,
    }),
  );
  const [released] = batch.released;
  if (released && batch.recorded.length > 0 && sends({ isActive: row.isActive, verification: columns.verification }))
    await handOver(db, queue, inSequence(released));
  return batch.recorded[0]?.verification ?? row.verification;
}

/** One challenge POST; answers why it did not prove ownership, or null when it did. Never throws. */
async function challenge(row: SubscriptionRow, settings: ChallengeSettings): Promise<string | null> {
  const revealed = await openSecrets(row, settings.encryptionKey).catch(() => null);
  if (!revealed) return UNREADABLE;
  const policy = refuseWebhookUrl(row.url, settings.allowLocalUrls);
  if (policy) return `URL refused: ${policy}`;
  const token = base64url(crypto.getRandomValues(new Uint8Array(24)));
  const body = challengeBody(token);
  try {
    const headers = await requestHeaders(
      {
        body,
        contentType: "application/json",
        deliveryId: crypto.randomUUID(),
        subscriptionId: row.id,
        event: CHALLENGE_EVENT,
        sequence: null,
        paymentVersion: null,
        username: revealed.username,
        password: revealed.password,
        secrets: signingSecrets(revealed, row),
        trace: null,
      },
      Math.floor(Date.now() / 1000),
    );
    const response = await fetch(row.url, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(CHALLENGE_TIMEOUT_MS) });
    return refusalOf(response.status, await answerStart(response.body), token);
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    return timedOut ? `no answer within ${CHALLENGE_TIMEOUT_MS / 1000} s` : "network error";
  }
}

/** D1 queries of one challenge: its take, and its record with what a proof releases (three statements). */
export const CHALLENGE_QUERIES = 4;

/**
 * The cron's job: the challenges due on the shard, side by side, CHALLENGES_AT_ONCE at most and as
 * many as `room` D1 queries hold after their read.
 */
export async function continueChallenges(
  db: Db,
  queue: ShardQueue,
  settings: ChallengeSettings,
  now: number,
  room = 1 + CHALLENGES_AT_ONCE * CHALLENGE_QUERIES,
): Promise<{ sent: number }> {
  const most = Math.min(CHALLENGES_AT_ONCE, Math.floor((room - 1) / CHALLENGE_QUERIES));
  if (most <= 0) return { sent: 0 };
  const due = await selectDueChallenges(db, now, most);
  await Promise.all(due.map((row) => sendChallenge(db, queue, row, settings, now)));
  return { sent: due.length };
}
