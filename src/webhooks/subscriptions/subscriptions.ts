import { sql } from "drizzle-orm";
import { runNamedBatch, type Db } from "../../db/client";
import { UNKEYED, type Keyed, type KeyedWrite } from "../../idempotency";
import { webhookSubscriptions, DEFAULT_LAG_ALERT_MS, type Ordering, type SigningScheme, type SubscriptionRow, type WebhookContentType } from "../../db/schema";
import { AppError, conflict, invalid, notFound, type FieldErrors } from "../../errors";
import { constantTimeEqual, sha256Hex } from "../../lib/crypto";
import { decrypt } from "../../lib/encryption";
import type { PageRequest } from "../../lib/pagination";
import { refuseWebhookUrl } from "../../lib/url-policy";
import { newSigningKeyPair, newSigningSecret, type SigningSecrets } from "../wire/signing";
import { sealAll, sealingKeyFits, wrongSealingKey, type Secrets } from "./sealing";
import { holdPending, releaseHeld, sendReleased, settleAcked } from "./holds";
import { verificationStarts } from "./verification";
import { storedFilters, type Filters } from "../outbox/filters";
import type { Caller } from "../../context";
import type { Keys, ServiceContext } from "../../context";
import { countWhere, listTable } from "../../db/list-page";
import { inAccount } from "../../db/scope";
import {
  deleteSubscriptionAttempts,
  deleteSubscriptionDeliveries,
  deleteSubscriptionRow,
  deleteSubscriptionReplays,
  deleteSubscriptionStats,
  hasSecret,
  insertSubscription,
  roomForOne,
  selectKeyFits,
  selectSubscription,
  subscriptionExists,
  updateSubscriptionRow,
} from "./statements";

export type { SubscriptionRow };

export interface SubscriptionFields {
  event: "payment.changed" | "subscription.health";
  url: string;
  content_type: WebhookContentType;
  username: string;
  password: string;
  invoice_ids: boolean;
  payment_status: boolean;
  payment_events: boolean;
  refund_reason: boolean;
  instrument_number: boolean;
  all_payment_details: boolean;
  is_active?: boolean;
  description?: string | null;
  filters?: Filters | null;
  /** Chosen at creation: `hmac` (default) or `ed25519`. */
  signing?: SigningScheme;
  /** `none` (default) or `per_payment`: applies to deliveries made after it is set. */
  ordering?: Ordering;
  /** The p95 lag (ms) past which health subscriptions are told it lags; null: never. */
  lag_alert_ms?: number | null;
}

export type { Keys } from "../../context";

/** What is sealed in a subscription row, opened (the previous secret and key only while they still sign). */
export type Revealed = Secrets;

/** What signs a subscription's deliveries: its secrets, and an Ed25519 subscription's keys. */
export function signingSecrets(revealed: Revealed, row: Pick<SubscriptionRow, "publicKey" | "previousPublicKey">): SigningSecrets {
  const previous = revealed.previousSigningKeyText;
  const publicKeys =
    row.publicKey === null ? undefined : previous !== null && row.previousPublicKey !== null ? [row.publicKey, row.previousPublicKey] : [row.publicKey];
  return {
    current: revealed.secretText,
    previous: revealed.previousSecretText,
    ed25519: revealed.signingKeyText === null ? null : { current: revealed.signingKeyText, previous, publicKeys },
  };
}

/**
 * A subscription with its secrets decrypted, for the record and for delivery. `revealed` is null
 * when ENCRYPTION_KEY cannot open them (the row was sealed with another key): the record says so,
 * deliveries fail with that reason, and the subscription can still be read and deleted.
 */
export interface Subscription extends SubscriptionRow {
  revealed: Revealed | null;
}

export const UNREADABLE =
  "This subscription's credentials and signing secret were sealed with another ENCRYPTION_KEY and cannot be read. Restore that key, or delete the subscription and create it again.";

const ROTATION_GRACE_MS = 24 * 3600 * 1000;

/**
 * An account's subscriptions are at most this many. Every change writes a delivery for each active
 * one, so the cap bounds what one change costs its shard (rows written, delivery log bytes).
 */
export const MAX_SUBSCRIPTIONS = 20;
export const TOO_MANY_SUBSCRIPTIONS = `An account has at most ${MAX_SUBSCRIPTIONS} webhook subscriptions.`;

async function check(input: Partial<SubscriptionFields>, caller: Caller, keys: Keys): Promise<void> {
  const errors: FieldErrors = {};
  if (input.url !== undefined) {
    const reason = refuseWebhookUrl(input.url, keys.allowLocalUrls);
    if (reason) errors.url = [reason];
  }
  if (input.username !== undefined && input.username === caller.username) {
    errors.username = ["Use credentials of your own choosing, not your API username."];
  }
  if (input.password !== undefined && constantTimeEqual(await sha256Hex(input.password), caller.passwordHash)) {
    errors.password = ["Use credentials of your own choosing, not your API password."];
  }
  if (Object.keys(errors).length > 0) throw invalid(errors);
}

export const SIGNING_FIXED = "The signing scheme is chosen when a subscription is made: create a new subscription to change it.";

function flagColumns(input: Partial<SubscriptionFields>) {
  const out: Partial<SubscriptionRow> = {};
  if (input.invoice_ids !== undefined) out.invoiceIds = input.invoice_ids;
  if (input.payment_status !== undefined) out.paymentStatus = input.payment_status;
  if (input.payment_events !== undefined) out.paymentEvents = input.payment_events;
  if (input.refund_reason !== undefined) out.refundReason = input.refund_reason;
  if (input.instrument_number !== undefined) out.instrumentNumber = input.instrument_number;
  if (input.all_payment_details !== undefined) out.allPaymentDetails = input.all_payment_details;
  if (input.is_active !== undefined) out.isActive = input.is_active;
  if (input.url !== undefined) out.url = input.url;
  if (input.content_type !== undefined) out.contentType = input.content_type;
  if (input.event !== undefined) out.event = input.event;
  if (input.description !== undefined) out.description = input.description;
  if (input.filters !== undefined) out.filters = storedFilters(input.filters);
  if (input.ordering !== undefined) out.ordering = input.ordering;
  if (input.lag_alert_ms !== undefined) out.lagAlertMs = input.lag_alert_ms;
  return out;
}

export async function createSubscription(
  ctx: ServiceContext,
  input: SubscriptionFields,
  keyed: KeyedWrite<Subscription> = UNKEYED,
  id: string = crypto.randomUUID(),
): Promise<Keyed<Subscription>> {
  const { db, caller, keys } = ctx;
  await check(input, caller, keys);
  const now = Date.now();
  const secretText = newSigningSecret();
  const signing = input.signing ?? "hmac";
  const pair = signing === "ed25519" ? await newSigningKeyPair() : null;
  const revealed: Revealed = {
    username: input.username,
    password: input.password,
    secretText,
    previousSecretText: null,
    signingKeyText: pair?.signingKey ?? null,
    previousSigningKeyText: null,
  };
  const row: SubscriptionRow = {
    id,
    accountId: caller.accountId,
    user: caller.username,
    event: input.event,
    description: input.description ?? null,
    url: input.url,
    contentType: input.content_type,
    ...(await sealAll(keys.encryptionKey, revealed)),
    previousSecretExpiresAt: null,
    signing,
    publicKey: pair?.publicKey ?? null,
    previousPublicKey: null,
    invoiceIds: input.invoice_ids,
    paymentStatus: input.payment_status,
    paymentEvents: input.payment_events,
    refundReason: input.refund_reason,
    instrumentNumber: input.instrument_number,
    allPaymentDetails: input.all_payment_details,
    isActive: input.is_active ?? true,
    filters: storedFilters(input.filters),
    failingSince: null,
    consecutiveFailures: 0,
    failingReported: false,
    lastAttemptAt: null,
    lastSuccessAt: null,
    backoffUntil: null,
    lastRemovedSequence: 0,
    droppedSequence: 0,
    droppedCreated: 0,
    feedAcked: null,
    feedAckedSequence: null,
    recentTimeouts: 0,
    recentAnswers: 0,
    recentSince: null,
    ordering: input.ordering ?? "none",
    lagAlertMs: input.lag_alert_ms === undefined ? DEFAULT_LAG_ALERT_MS : input.lag_alert_ms,
    laggingSince: null,
    caughtUpSince: null,
    // Where the account requires it, nothing goes out before its receiver proves it wants it.
    ...verificationStarts(caller.verifyEndpoints, now),
    createdAt: now,
    updatedAt: now,
  };
  const created: Subscription = { ...row, revealed };
  // The cap, and the key's fit with the subscriptions already sealed (sealing.ts), are checked in
  // the insert itself: concurrent creations cannot pass the cap together, and the write is one round trip.
  const room = roomForOne(caller.accountId, MAX_SUBSCRIPTIONS);
  const fits = await sealingKeyFits(keys.encryptionKey);
  const batch = await runNamedBatch(db, {
    key: keyed.claim,
    insert: insertSubscription(db, row, sql`${keyed.owns} and ${room} and ${fits}`),
    answer: await keyed.answer(created, subscriptionExists(db, row.id)),
    fits: selectKeyFits(db, fits),
  });
  const decided = keyed.decided(batch.key);
  if (decided) return { decided };
  if (batch.insert.length > 0) return { ran: created };
  if (!batch.fits[0]?.fits) throw wrongSealingKey();
  throw conflict(TOO_MANY_SUBSCRIPTIONS);
}

export async function getSubscription({ db, accountId, keys }: ServiceContext, id: string): Promise<Subscription> {
  const row = await selectSubscription(db, accountId, id).get();
  if (!row) throw notFound();
  return reveal(row, keys.encryptionKey);
}

/** Opens the row's sealed fields; a row the key cannot open is reported (log and record), never thrown. */
/** Whether the secret before the last rotation still signs (its 24 hours have not ended). */
export function previousSecretValid(row: SubscriptionRow, now: number): boolean {
  return Boolean(row.previousSecret && (row.previousSecretExpiresAt ?? 0) > now);
}

export async function reveal(row: SubscriptionRow, encryptionKey: string | undefined, now = Date.now()): Promise<Subscription> {
  const previousValid = previousSecretValid(row, now);
  try {
    const [[username, password], secretText, previousSecretText, signingKeyText, previousSigningKeyText] = await Promise.all([
      decrypt(encryptionKey, row.credentials).then((text) => JSON.parse(text) as [string, string]),
      decrypt(encryptionKey, row.secret),
      previousValid ? decrypt(encryptionKey, row.previousSecret!) : null,
      row.signingKey === null ? null : decrypt(encryptionKey, row.signingKey),
      previousValid && row.previousSigningKey !== null ? decrypt(encryptionKey, row.previousSigningKey) : null,
    ]);
    return { ...row, revealed: { username, password, secretText, previousSecretText, signingKeyText, previousSigningKeyText } };
  } catch (error) {
    if (error instanceof AppError) throw error; // no usable key at all: "Service is not configured."
    console.error(JSON.stringify({ type: "subscription_unreadable", subscription_id: row.id, account_id: row.accountId, reason: UNREADABLE }));
    return { ...row, revealed: null };
  }
}

/**
 * The subscription, opened, for a write that seals its secrets again: read in one round trip with
 * the check that ENCRYPTION_KEY fits the subscriptions already sealed (sealing.ts). A write to one
 * that cannot be opened is refused with the reason.
 */
async function openForSealing({ db, accountId, keys }: ServiceContext, id: string): Promise<Subscription & { revealed: Revealed }> {
  const fits = await sealingKeyFits(keys.encryptionKey);
  const { rows, checked } = await runNamedBatch(db, {
    rows: selectSubscription(db, accountId, id),
    checked: selectKeyFits(db, fits),
  });
  if (!rows[0]) throw notFound();
  const subscription = await reveal(rows[0], keys.encryptionKey);
  if (!subscription.revealed) throw conflict(UNREADABLE);
  if (!checked[0]?.fits) throw wrongSealingKey();
  return subscription as Subscription & { revealed: Revealed };
}

/** PATCH (partial) and PUT (whole: the route's schema makes every field present). */
export async function updateSubscription(ctx: ServiceContext, id: string, input: Partial<SubscriptionFields>): Promise<Subscription> {
  const { db, caller, keys } = ctx;
  const opened = await openForSealing(ctx, id);
  const current = opened.revealed;
  await check(input, caller, keys);
  if (input.signing !== undefined && input.signing !== opened.signing) throw invalid({ signing: [SIGNING_FIXED] });
  const secrets = { ...current, username: input.username ?? current.username, password: input.password ?? current.password };
  const changes: Partial<SubscriptionRow> = { ...flagColumns(input), ...(await sealAll(keys.encryptionKey, secrets)), updatedAt: Date.now() };
  if (input.is_active === true) changes.failingSince = null;
  const now = changes.updatedAt!;
  // A new URL starts its proof of ownership again where the account requires one (verification.ts).
  const urlChanged = input.url !== undefined && input.url !== opened.url;
  if (urlChanged) Object.assign(changes, verificationStarts(caller.verifyEndpoints, now));
  const holds = input.is_active === false || (urlChanged && caller.verifyEndpoints);
  const releases = input.is_active === true || (urlChanged && !caller.verifyEndpoints && ["pending", "failed"].includes(opened.verification));
  // In the same batch: paused, or waiting for its new receiver's proof, its pending deliveries are
  // held; resumed (or no proof needed any more), those its feed reader acked are settled and the
  // others go out if it sends (holds.ts).
  const batch = await runNamedBatch(db, {
    update: updateSubscriptionRow(db, caller.accountId, id, changes),
    paused: holds ? [holdPending(db, caller.accountId, id, now)] : [],
    settled: releases ? [settleAcked(db, caller.accountId, id, now)] : [],
    released: releases ? [releaseHeld(db, caller.accountId, id, now)] : [],
  });
  const [row] = batch.update;
  if (!row) throw notFound();
  const [released] = batch.released;
  if (released) await sendReleased(ctx, released);
  return reveal(row, keys.encryptionKey);
}

export async function rotateSubscriptionSecret(ctx: ServiceContext, id: string, keyed: KeyedWrite<Subscription> = UNKEYED): Promise<Keyed<Subscription>> {
  const { db, accountId, keys } = ctx;
  const current = await openForSealing(ctx, id);
  const now = Date.now();
  const secretText = newSigningSecret();
  // An Ed25519 subscription gets a new key pair with its new secret; the old pair signs as long as the old secret.
  const pair = current.signing === "ed25519" ? await newSigningKeyPair() : null;
  const revealed: Revealed = {
    ...current.revealed,
    secretText,
    previousSecretText: current.revealed.secretText,
    signingKeyText: pair?.signingKey ?? null,
    previousSigningKeyText: pair ? current.revealed.signingKeyText : null,
  };
  const sealed = await sealAll(keys.encryptionKey, revealed);
  const publicKeys = pair ? { publicKey: pair.publicKey, previousPublicKey: current.publicKey } : {};
  const changes = { ...sealed, ...publicKeys, previousSecretExpiresAt: now + ROTATION_GRACE_MS, updatedAt: now };
  const rotated: Subscription = { ...current, ...changes, revealed };
  const batch = await runNamedBatch(db, {
    key: keyed.claim,
    update: updateSubscriptionRow(db, accountId, id, changes, keyed.owns),
    // Stored only if the rotation applied (the subscription was not deleted meanwhile).
    answer: await keyed.answer(rotated, hasSecret(db, accountId, id, changes.secret)),
  });
  const decided = keyed.decided(batch.key);
  if (decided) return { decided };
  if (batch.update.length === 0) throw notFound();
  return { ran: rotated };
}

export const PAUSED = "The subscription is paused (is_active is false): resume it first.";

/** The account's subscription, if it is active: 404 if it is not the account's, 409 if it is paused. */
export async function activeSubscription(db: Db, accountId: string, subscriptionId: string) {
  const subscription = await selectSubscription(db, accountId, subscriptionId).get();
  if (!subscription) throw notFound();
  if (!subscription.isActive) throw conflict(PAUSED);
  return subscription;
}

/** Deletes the subscription with its delivery log; pending deliveries are dropped with it. */
export async function deleteSubscription({ db, accountId }: ServiceContext, id: string): Promise<void> {
  const found = await selectSubscription(db, accountId, id).get();
  if (!found) throw notFound();
  await runNamedBatch(db, {
    attempts: deleteSubscriptionAttempts(db, id),
    deliveries: deleteSubscriptionDeliveries(db, id),
    stats: deleteSubscriptionStats(db, id),
    replays: deleteSubscriptionReplays(db, id),
    subscription: deleteSubscriptionRow(db, accountId, id),
  });
}

export async function listSubscriptions({ db, accountId, keys }: ServiceContext, request: PageRequest) {
  const where = inAccount(webhookSubscriptions, accountId);
  const page = await listTable(
    db,
    webhookSubscriptions,
    {
      where,
      sort: webhookSubscriptions.createdAt,
      id: webhookSubscriptions.id,
      count: countWhere(db, webhookSubscriptions, where),
    },
    request,
  );
  return { ...page, results: await Promise.all(page.rows.map((row) => reveal(row, keys.encryptionKey))) };
}
