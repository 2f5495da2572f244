import { cursorText, cursorValue } from "../../lib/crypto";
/**
 * The feed (docs/interface.md, "The feed"): a subscription's deliveries in sequence order after a
 * cursor, each body exactly the bytes sent (or to be sent), so a receiver can pull what it missed,
 * or pull everything (a paused subscription plus the feed is a pull-only subscription).
 *
 * A cursor is opaque to clients: base64url of JSON `{s, e, q, c}`: the subscription, the epoch of
 * the account on its shard (a new one when a move arrives: tenants.epoch), and the sequence number
 * and `created` of the last delivery read. A cursor of another epoch, or one before a delivery
 * that retention removed, answers 410: the receiver resynchronises by polling /v2/payments/. A
 * discard never expires a cursor: the numbers go on above what it dropped (outbox/sequence.ts).
 */
import { and, asc, eq, gt, gte, isNotNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { fixedLimit } from "../../db/fixed-limit";
import { inAccount } from "../../db/scope";
import { tenants, webhookDeliveries, webhookSubscriptions } from "../../db/schema";
import { AppError, conflict, invalid, notFound } from "../../errors";
import type { ServiceContext } from "../../context";
import { applyBodies, bodySources, eventsToRebuild } from "../outbox/bodies";
import type { DeliveryRow } from "./deliveries";
import { requestHeaders } from "../wire/request-headers";
import { traceOfRow } from "../wire/trace";
import { getSubscription, signingSecrets, UNREADABLE } from "./subscriptions";
import { highestSequence, highestStamp } from "../outbox/sequence";

export const FEED_WAIT_STEP_MS = 500;
export const EXPIRED = "Cursor expired; resynchronise by polling /v2/payments/.";

/** Where a reader stands: after this sequence number, whose delivery was created then. */
export interface Position {
  sequence: number;
  created: number;
}

interface FeedCursor extends Position {
  subscriptionId: string;
  epoch: string;
}

export function encodeFeedCursor(cursor: FeedCursor): string {
  return cursorText({ s: cursor.subscriptionId, e: cursor.epoch, q: cursor.sequence, c: cursor.created });
}

/** The cursor a client sent, or null when it is not one of ours. Pure. */
export function decodeFeedCursor(text: string): FeedCursor | null {
  try {
    const { s, e, q, c } = cursorValue(text) as Record<string, unknown>;
    if (typeof s !== "string" || typeof e !== "string" || !Number.isSafeInteger(q) || !Number.isSafeInteger(c) || (q as number) < 0) return null;
    return { subscriptionId: s, epoch: e, sequence: q as number, created: c as number };
  } catch {
    return null;
  }
}

/** A page of the feed: each delivery with the cursor that stands just after it, and where to go on from. */
export interface FeedPage {
  items: { row: DeliveryRow; cursor: string }[];
  next: string;
}

/**
 * The headers each delivery of a page would be sent with now (signed at this moment, with the
 * subscription's current secrets and keys), for a listener that forwards them as if pushed.
 */
export async function signedHeaders(ctx: ServiceContext, subscriptionId: string, rows: DeliveryRow[], now = Date.now()): Promise<Record<string, string>[]> {
  const subscription = await getSubscription(ctx, subscriptionId);
  if (!subscription.revealed) throw conflict(UNREADABLE);
  const { revealed } = subscription;
  const timestamp = Math.floor(now / 1000);
  return Promise.all(
    rows.map((row) =>
      requestHeaders(
        {
          body: row.body,
          contentType: row.contentType,
          deliveryId: row.id,
          subscriptionId,
          event: row.event ?? "payment.changed",
          sequence: row.sequence,
          paymentVersion: row.paymentVersion,
          username: revealed.username,
          password: revealed.password,
          secrets: signingSecrets(revealed, subscription),
          trace: traceOfRow(row),
        },
        timestamp,
      ),
    ),
  );
}

/**
 * The subscription as the feed needs it, scoped to the account: its epoch, what retention removed,
 * its acked position, the newest number and stamp it has given, and the number of its latest kept
 * delivery made at or before `created` (where a cursor says it stands).
 */
async function feedState(db: Db, accountId: string, subscriptionId: string, created: number) {
  const s = webhookSubscriptions;
  const d = webhookDeliveries;
  const id = sql`${subscriptionId}`;
  const row = await db
    .select({
      lastRemovedSequence: s.lastRemovedSequence,
      feedAcked: s.feedAcked,
      epoch: sql<string>`(select coalesce(t.epoch, cast(t.created_at as text)) from ${tenants} t where t.id = ${accountId})`,
      highest: highestSequence(id),
      highestStamp: highestStamp(id),
      atOrBefore: sql<
        number | null
      >`(select b.sequence from ${d} b where b.subscription_id = ${subscriptionId} and b.sequence is not null and b.created_at <= ${created} order by b.created_at desc, b.id desc limit 1)`,
    })
    .from(s)
    .where(and(inAccount(s, accountId), eq(s.id, subscriptionId)))
    .get();
  if (!row) throw notFound();
  return row;
}

const START: Position = { sequence: 0, created: 0 };

/**
 * The position a cursor stands for (`acked`: the kept one; none: the start), checked against the
 * subscription. A cursor is one the feed handed out exactly when it stands at or below the newest
 * number given, with a stamp no later than that number's, and no kept delivery after it is made
 * at or before its stamp (the log is in sequence order: sequence.ts): else 400, whatever was
 * edited. The kept position passed that check when it was acked, and later deliveries are made
 * after it. A position has expired (410) when it is of another epoch, or retention removed a
 * delivery after it.
 */
async function positionOf(db: Db, accountId: string, subscriptionId: string, after: string | undefined, field: "after" | "cursor") {
  const bad = (message: string) => invalid({ [field]: [message] });
  if (after === "acked" && field === "cursor") throw bad('"acked" is not a cursor: send a cursor the feed handed out.');
  const cursor = after === undefined || after === "acked" ? undefined : decodeFeedCursor(after);
  if (cursor === null) throw bad("Not a cursor of this feed.");
  if (cursor && cursor.subscriptionId !== subscriptionId) throw bad("This cursor belongs to another subscription's feed.");
  const state = await feedState(db, accountId, subscriptionId, cursor?.created ?? 0);
  if (after === undefined || (after === "acked" && state.feedAcked === null)) return { position: START, state }; // from the oldest kept
  const position = cursor ?? decodeFeedCursor(state.feedAcked!);
  if (position === null) throw bad("The kept position is not a cursor of this feed: ack one the feed handed out.");
  if (position.epoch !== state.epoch) throw new AppError("gone", EXPIRED);
  const handedOut = cursor ? position.created <= state.highestStamp && (state.atOrBefore ?? 0) <= position.sequence : true;
  if (!handedOut || position.sequence > state.highest) throw bad("This cursor points past what the feed has handed out.");
  if (position.sequence < state.lastRemovedSequence) throw new AppError("gone", EXPIRED);
  return { position, state };
}

/**
 * One page of the feed: up to `limit` deliveries after `after`, in sequence order; with `wait`
 * seconds, an empty page waits that long for the next delivery. Returns them with the cursor to
 * go on from (the same position when there is nothing new).
 */
export async function readFeed(
  ctx: ServiceContext,
  subscriptionId: string,
  { after, limit, wait }: { after?: string; limit: number; wait: number },
): Promise<FeedPage> {
  const { db, accountId } = ctx;
  const { position: from, state } = await positionOf(db, accountId, subscriptionId, after, "after");
  const d = webhookDeliveries;
  const deadline = Date.now() + wait * 1000;
  for (;;) {
    const rows = await db
      .select()
      .from(d)
      .where(
        and(
          inAccount(d, accountId),
          eq(d.subscriptionId, subscriptionId),
          gte(d.createdAt, from.created),
          isNotNull(d.sequence),
          gt(d.sequence, from.sequence),
        ),
      )
      .orderBy(asc(d.createdAt), asc(d.id))
      .limit(fixedLimit(limit));
    if (rows.length > 0 || Date.now() + FEED_WAIT_STEP_MS > deadline) {
      const sources = await bodySources(db, eventsToRebuild(rows));
      const cursorAt = (position: Position) => encodeFeedCursor({ subscriptionId, epoch: state.epoch, ...position });
      const items = applyBodies(rows, sources).map((row) => ({ row, cursor: cursorAt({ sequence: row.sequence!, created: row.createdAt }) }));
      return { items, next: items.at(-1)?.cursor ?? cursorAt(from) };
    }
    await new Promise((resolve) => setTimeout(resolve, FEED_WAIT_STEP_MS));
  }
}

/** Keeps a position for the subscription (`after=acked` reads from it); a cursor behind the kept one changes nothing. */
export async function ackFeed({ db, accountId }: ServiceContext, subscriptionId: string, cursorText: string): Promise<{ cursor: string }> {
  const { position, state } = await positionOf(db, accountId, subscriptionId, cursorText, "cursor");
  const kept = state.feedAcked === null ? null : decodeFeedCursor(state.feedAcked);
  const s = webhookSubscriptions;
  // Only forward (a kept cursor of another epoch is replaced): two acks at once never move it back.
  const forward = kept === null || kept.epoch !== state.epoch ? sql`1` : sql`coalesce(${s.feedAckedSequence}, -1) < ${position.sequence}`;
  const [moved] = await db
    .update(s)
    .set({ feedAcked: cursorText, feedAckedSequence: position.sequence })
    .where(and(inAccount(s, accountId), eq(s.id, subscriptionId), forward))
    .returning({ cursor: s.feedAcked });
  if (moved) return { cursor: moved.cursor! };
  const now = await db
    .select({ cursor: s.feedAcked })
    .from(s)
    .where(and(inAccount(s, accountId), eq(s.id, subscriptionId)))
    .get();
  return { cursor: now?.cursor ?? cursorText };
}
