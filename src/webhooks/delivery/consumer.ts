/**
 * The delivery queue's consumer, in four stages over a whole batch:
 *   admit   (admission.ts) one round trip reads the batch's subscriptions and their attempts in
 *                         flight; the admission rule says how many of each may be leased now;
 *   lease   (lease.ts)    one round trip leases those (with the deliveries of their payments
 *                         that wait behind ordered ones, as runs), puts the others off unleased,
 *                         and reads what rebuilds their bodies;
 *   attempt (attempt.ts)  each leased delivery is signed and POSTed, ATTEMPTS_AT_ONCE at a time,
 *                         the subscriptions taking turns (lanes.ts);
 *   outcome (outcome.ts)  a pure decision per attempt: succeeded, retry in n seconds, or failed;
 *   record  (record.ts)   one batch records the attempts that ended together, and retries are
 *                         handed to the queue with their delays.
 * The row is the truth: a message is acked once its delivery is leased, and the attempts go on
 * after the batch is handed back (waitUntil, see wrangler.toml's compatibility flag), within
 * waitUntil's 30 s by construction (lanes.ts), so a receiver that hangs never holds the batches
 * behind it. The invocation never holds more connections than a Worker has: the shards' leases are taken
 * one after another, then the attempts take all lanes but one, which records (lanes.ts). If the
 * isolate dies mid-attempt, the lease lapses and the sweeper re-sends.
 */
import { and, eq } from "drizzle-orm";
import { createDb, runBatch, type Db } from "../../db/client";
import { shardBinding, shardNotConfigured } from "../../db/shards";
import { atMost } from "../../lib/at-most";
import { groupBy } from "../../lib/group-by";
import { deliveryStatusIs, sends, webhookDeliveries } from "../../db/schema";
import type { Env } from "../../env";
import { refuseWebhookUrl } from "../../lib/url-policy";
import { signingSecrets, UNREADABLE } from "../subscriptions/subscriptions";
import { attemptDelivery, type AttemptResult } from "./attempt";
import { planLeases, type Asking, type LeasePlan } from "./admission";
import { leaseDeliveries, readAdmission, type AdmissionRow, type LeaseResult, type DeliveryRow, type SubscriptionRow } from "./lease";
import type { DeliveryMessage, QueueMessage, ShardQueue } from "../outbox/message";
import { behindOf } from "../outbox/order";
import { isReplayStep, runReplaySteps } from "./replay-messages";
import { HELD } from "../subscriptions/holds";
import { openSecrets } from "../subscriptions/opened-secrets";
import { handOver } from "../outbox/outbox";
import { gather } from "./gather";
import { decideOutcome } from "./outcome";
import { recordAttempts, type Attempted } from "./record";
import {
  answersQuickly,
  ATTEMPTS_AT_ONCE,
  chainRoom,
  LEASE_BODY_BYTES,
  leaseMsAt,
  runBodyBytes,
  OVERFLOW_DELAY_MS,
  startOrder,
  startsInTime,
  UNPROVEN_AT_ONCE,
  withinBodyBytes,
} from "./lanes";
import { traceOfRow } from "../wire/trace";
import { sentAs } from "../wire/sent-headers";

/** When the consumer itself fails (D1 down, bad configuration), the message comes back this much later. */
const ERROR_RETRY_SECONDS = 30;
/** When no ENCRYPTION_KEY can open any secret, a leased delivery comes back this much later. */
export const NOT_CONFIGURED_RETRY_SECONDS = 60;

/** A leased delivery to attempt, and the run leased behind it (its payment's deliveries that wait for it, in order). */
type Started = { delivery: DeliveryRow; subscription: SubscriptionRow; shard: ShardWork; quick: boolean; behind?: DeliveryRow[] };
/** What one invocation has taken so far of its bodies' bytes and its unproven attempts (lanes.ts). */
type Taken = { bodies: { left: number; taken: number }; unproven: number };
type ShardWork = { db: Db; queue: ShardQueue };

/**
 * A batch may hold deliveries of several shards (each message names its own): each shard's are
 * leased on that shard, one shard after another, and then all the leased attempts share the
 * invocation's lanes. A message whose shard the configuration lacks comes back later (nothing is
 * lost while the binding is restored); one without a shard is acked, and its shard's sweeper
 * sends the row again.
 */
export async function consumeDeliveries(
  batch: MessageBatch<QueueMessage>,
  env: Env,
  ctx: ExecutionContext,
  { retryScale = 1 }: { retryScale?: number } = {},
): Promise<void> {
  // Replays' steps first, one after another (each bounded: replays/steps.ts): before any lease is
  // taken, so none of a lease's time goes to them, and before the attempts, which then take every
  // connection but one (lanes.ts).
  await runReplaySteps(batch.messages.filter(isReplayStep), env);
  const startedAt = Date.now();
  const deliveries = batch.messages.filter((message): message is Message<DeliveryMessage> => !isReplayStep(message));
  const byShard = groupBy(deliveries, (message) => (typeof message.body?.shard === "string" ? message.body.shard : ""));
  const started: Started[] = [];
  const taken: Taken = { bodies: { left: LEASE_BODY_BYTES, taken: 0 }, unproven: 0 };
  for (const [shard, messages] of byShard) started.push(...(await leaseShard(shard, messages, env, started.length, taken)));
  ctx.waitUntil(
    deliverAll(env, started, retryScale, startedAt, taken.bodies).catch((error) =>
      console.error(JSON.stringify({ type: "delivery_error", error: String(error) })),
    ),
  );
}

/** Leases one shard's deliveries, acks their messages, ends or holds those that are not to be attempted, and returns those to attempt. */
async function leaseShard(shard: string, messages: readonly Message<DeliveryMessage>[], env: Env, position: number, taken: Taken): Promise<Started[]> {
  const binding = shardBinding(env, shard);
  if (!binding) {
    shardNotConfigured(shard, { delivery_ids: messages.map((message) => message.body?.delivery_id) });
    for (const message of messages) {
      if (shard === "") message.ack();
      else message.retry({ delaySeconds: ERROR_RETRY_SECONDS });
    }
    return [];
  }
  const work: ShardWork = { db: createDb(binding), queue: { queue: env.DELIVERIES, shard } };
  const now = Date.now();
  const ids = [...new Set(messages.map((message) => message.body?.delivery_id).filter((id) => typeof id === "string"))];
  let leases;
  let quick: Set<string>;
  let runs: Map<string, DeliveryRow[]>;
  try {
    ({ leases, quick, runs } = await admitAndLease(work.db, ids, env, now, position, taken));
  } catch (error) {
    console.error(JSON.stringify({ type: "delivery_error", shard, delivery_ids: ids, error: String(error) }));
    for (const message of messages) message.retry({ delaySeconds: ERROR_RETRY_SECONDS });
    return [];
  }

  const started: Started[] = [];
  const ended: string[] = [];
  const held: DeliveryRow[] = [];
  const putOff: { id: string; delaySeconds: number }[] = [];
  for (const message of messages) {
    const id = message.body?.delivery_id;
    const lease = leases.get(id);
    leases.delete(id); // a second copy in the batch finds it taken
    if (lease?.kind === "early") {
      message.retry({ delaySeconds: lease.delaySeconds });
      continue;
    }
    if (lease?.kind === "put_off") putOff.push({ id, delaySeconds: lease.delaySeconds });
    if (lease?.kind === "leased") {
      const { delivery, subscription } = lease;
      if (!subscription) ended.push(delivery.id);
      else if (!sends(subscription)) held.push(delivery);
      else
        started.push({
          delivery,
          subscription,
          shard: work,
          quick: quick.has(subscription.id),
          behind: delivery.ordered ? runs.get(paymentKey(delivery)) : undefined,
        });
    }
    message.ack();
  }
  try {
    // A put-off delivery's row says when it is due; a new message brings it back then (a retried
    // message would count toward the queue's retries and could end in the dead-letter queue).
    await handOver(work.db, work.queue, putOff);
    await endDeliveries(work.db, ended, now);
    await holdDeliveries(work.db, held, now);
  } catch (error) {
    // Their leases lapse and the sweeper sends them again.
    console.error(JSON.stringify({ type: "delivery_error", shard, error: String(error) }));
  }
  return started;
}

/**
 * The admission rule, then the lease: the batch's subscriptions and their attempts in flight are
 * read, each subscription's oldest due deliveries are leased up to what the rule admits, and the
 * others are put off, unleased. One that waits for an earlier delivery of its payment
 * (outbox/order.ts) takes no place, and nothing is written for it; behind each ordered delivery
 * leased to be attempted, those of its payment that wait for it are leased as its run, their
 * bodies within an even share of what the invocation has left. A deleted subscription's
 * deliveries are leased to be ended, a paused one's to be held; those of a subscription whose secrets no key can open (ENCRYPTION_KEY
 * missing) are put off a minute, unleased and unattempted, until the key is deployed.
 */
async function admitAndLease(
  db: Db,
  ids: string[],
  env: Env,
  now: number,
  position: number,
  taken: Taken,
): Promise<{ leases: Map<string, LeaseResult>; quick: Set<string>; runs: Map<string, DeliveryRow[]> }> {
  const { rows: read, subscriptions } = await readAdmission(db, ids, now);
  // Those that wait for an earlier delivery of their payment take no place in the plan (order.ts).
  const waiting = read.filter((row) => row.waiting);
  const rows = read.filter((row) => !row.waiting);
  const byId = new Map(subscriptions.map((row) => [row.id, row]));
  const notConfigured = new Set<string>();
  await Promise.all(subscriptions.filter(sends).map((row) => openSecrets(row, env.ENCRYPTION_KEY, now).catch(() => void notConfigured.add(row.id))));
  const plan: LeasePlan = { lease: [], putOff: [] };
  const asking: Asking[] = [];
  const oldestFirst = [...rows].sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  for (const [subscriptionId, list] of groupBy(oldestFirst, (row) => row.subscriptionId)) {
    const subscription = byId.get(subscriptionId);
    const listIds = list.map((row) => row.id);
    if (!subscription || !sends(subscription)) plan.lease.push(...listIds.map((id) => ({ id, cap: Number.MAX_SAFE_INTEGER, rank: 0 })));
    else if (notConfigured.has(subscriptionId)) {
      console.error(
        JSON.stringify({ type: "delivery_put_off", delivery_ids: listIds, retry_in_s: NOT_CONFIGURED_RETRY_SECONDS, error: "Service is not configured." }),
      );
      plan.putOff.push(...listIds.map((id) => ({ id, at: now + NOT_CONFIGURED_RETRY_SECONDS * 1000 })));
    } else {
      asking.push({ state: admissionState(subscription), ids: listIds });
    }
  }
  // Every delivery of the batch waits for an earlier one of its payment: nothing to lease, nothing read again.
  if (rows.length === 0 && waiting.length > 0) {
    const waits = new Set(waiting.map((row) => row.id));
    return { leases: new Map(ids.map((id) => [id, waits.has(id) ? { kind: "waiting" } : { kind: "done" }])), quick: new Set(), runs: new Map() };
  }
  const ruled = planLeases(asking, now, Math.random);
  // Subscriptions that answer quickly first; those not known to, one wave of lanes an invocation.
  // The bodies stay within LEASE_BODY_BYTES. In that start order the first that fit are leased,
  // the others put off a moment. Each attempt's lease holds while it may wait for a lane: its
  // place in the start order says how long.
  const quick = new Set(subscriptions.filter((row) => sends(row) && answersQuickly(admissionState(row), now)).map((row) => row.id));
  const admitted = new Set(ruled.lease.map((lease) => lease.id));
  const inOrder = quickFirst(
    rows.filter((row) => admitted.has(row.id)),
    quick,
  );
  const unproven = inOrder.filter((row) => !quick.has(row.subscriptionId));
  const tooMany = new Set(unproven.slice(Math.max(0, UNPROVEN_AT_ONCE - taken.unproven)).map((row) => row.id));
  const { taken: leased, over } = withinBodyBytes(
    inOrder.filter((row) => !tooMany.has(row.id)),
    taken.bodies,
  );
  taken.unproven += leased.filter((row) => !quick.has(row.subscriptionId)).length;
  const place = new Map(leased.map((row, i) => [row.id, position + i]));
  const attempts = ruled.lease.filter((lease) => place.has(lease.id)).map((lease) => ({ ...lease, leaseMs: leaseMsAt(place.get(lease.id)!) }));
  const overflow = [...over.map((row) => row.id), ...tooMany].map((id) => ({ id, at: now + OVERFLOW_DELAY_MS }));
  // Behind each ordered delivery to attempt, its payment's that wait for it, as its run.
  const behind = leased.flatMap((row) => (row.ordered && row.sequence !== null ? [behindOf({ ...row, sequence: row.sequence })] : []));
  const { leases, runs } = await leaseDeliveries(
    db,
    ids,
    { lease: [...plan.lease, ...attempts], putOff: [...plan.putOff, ...ruled.putOff, ...overflow], waiting: waiting.map((row) => row.id) },
    subscriptions,
    now,
    { behind, bodyBytes: runBodyBytes(taken.bodies.left, behind.length) },
  );
  taken.bodies.left -= runs.reduce((sum, row) => sum + row.body.length, 0);
  return { leases, quick, runs: new Map(runsOf(runs).map((run) => [paymentKey(run[0]!), run])) };
}

/** A subscription's state as the admission rule reads it. Pure. */
function admissionState(row: AdmissionRow) {
  return {
    inFlight: row.inFlight,
    oldestStart: row.oldestStart,
    backoffUntil: row.backoffUntil,
    timeouts: row.recentTimeouts,
    answers: row.recentAnswers,
    since: row.recentSince,
  };
}

/** The start order of a batch: the deliveries of subscriptions that answer quickly first, then the others. Pure. */
function quickFirst<T extends { id: string; subscriptionId: string; createdAt: number }>(rows: readonly T[], quick: Set<string>): T[] {
  return [...startOrder(rows.filter((row) => quick.has(row.subscriptionId))), ...startOrder(rows.filter((row) => !quick.has(row.subscriptionId)))];
}

/**
 * Attempts the leased deliveries ATTEMPTS_AT_ONCE at a time, in the start order their leases were
 * leased for, and records those that end close together in one batch, one shard at a time: the
 * one connection the attempts leave. A run (a delivery and those of its payment leased behind
 * it, at the lease or by a record that ends an ordered delivery with a success while a lane is
 * free and time is left: lanes.ts `chainRoom`) is attempted here with no message and no admission
 * read: each of its deliveries once the one before it succeeded and while an attempt still ends in
 * time (`startsInTime`), waiting its turn behind the attempts already queued; what it does not
 * reach is given back where the last one it made is recorded.
 */
async function deliverAll(env: Env, started: Started[], retryScale: number, startedAt: number, bodies: { left: number }): Promise<void> {
  const records = gather<Attempted & Started>(
    async (items) => {
      for (const attempted of groupBy(items, (item) => item.shard.queue.shard).values()) {
        const { shard } = attempted[0]!;
        const chain = chainRoom(startedAt, Date.now(), lanes.busy, bodies.left);
        const next = await recordAttempts(shard.db, shard.queue, attempted, chain);
        const subscriptionOf = new Map(attempted.map((item) => [item.subscription.id, item.subscription]));
        for (const run of runsOf(next)) {
          bodies.left -= run.reduce((sum, delivery) => sum + delivery.body.length, 0);
          lanes.add({ run: run.map((delivery) => ({ delivery, subscription: subscriptionOf.get(delivery.subscriptionId)!, shard, quick: true })), made: [] });
        }
      }
    },
    // Left leased: the lease lapses and the sweeper sends them again.
    (items, error) => console.error(JSON.stringify({ type: "delivery_error", delivery_ids: items.map((item) => item.delivery.id), error: String(error) })),
  );
  // A lane attempts a run's first delivery; once it succeeds, the rest of the run waits its turn
  // behind what is queued (so a lease never lapses while its attempt waits for a lane: lanes.ts
  // `leaseMsAt`). A run's attempts are recorded together once it ends: one batch, not one each.
  const lanes = atMost<{ run: Started[]; made: (Attempted & Started)[] }>(ATTEMPTS_AT_ONCE, async ({ run, made }) => {
    // The rest of a run whose turn came too late for one more attempt is given back, unattempted.
    if (made.length > 0 && !startsInTime(startedAt, Date.now())) {
      const last = { ...made.at(-1)!, handsOn: false, givenBack: run.map((later) => later.delivery) };
      for (const attempted of [...made.slice(0, -1), last]) records.add(attempted);
      return;
    }
    const [item, ...rest] = run;
    const { delivery, subscription } = item!;
    const result = await attempt(delivery, subscription, env);
    const outcome = decideOutcome({
      attempts: delivery.attempts - 1, // the lease counted this one
      scheduleStartedAt: delivery.scheduleStartedAt,
      scheduleFirstAttempt: delivery.scheduleFirstAttempt,
      failingSince: subscription.failingSince,
      responseStatus: result.responseStatus,
      retryAfter: result.retryAfter,
      startedAt: result.startedAt,
      endedAt: result.startedAt + result.durationMs,
      random: Math.random,
      scale: retryScale,
    });
    const handsOn = rest.length > 0 && outcome.status === "succeeded" && startsInTime(startedAt, Date.now());
    const done = [...made, { ...item!, result, outcome, handsOn, givenBack: handsOn ? [] : rest.map((later) => later.delivery) }];
    if (handsOn) lanes.add({ run: rest, made: done });
    else for (const attempted of done) records.add(attempted);
  });
  // Shard by shard, as their leases were taken: a delivery never starts later than its lease allows.
  const order = [...groupBy(started, (item) => item.shard.queue.shard).values()].flatMap((list) =>
    quickFirst(
      list.map((item) => ({ ...item, id: item.delivery.id, subscriptionId: item.delivery.subscriptionId, createdAt: item.delivery.createdAt })),
      new Set(list.filter((item) => item.quick).map((item) => item.subscription.id)),
    ),
  );
  for (const item of order)
    lanes.add({
      run: [item, ...(item.behind ?? []).map((delivery) => ({ delivery, subscription: item.subscription, shard: item.shard, quick: item.quick }))],
      made: [],
    });
  // Until no attempt is under way and every record is written (a record may start a run).
  do {
    await lanes.idle();
    await records.done();
  } while (lanes.busy > 0);
}

/** The payment, on its subscription, a delivery is of, as a key. Pure. */
const paymentKey = (row: Pick<DeliveryRow, "subscriptionId" | "paymentId">) => `${row.subscriptionId} ${row.paymentId}`;

/** The runs among leased rows: each payment's, on its subscription, in sequence order. Pure. */
export function runsOf(rows: DeliveryRow[]): DeliveryRow[][] {
  const runs = groupBy(rows, paymentKey);
  return [...runs.values()].map((run) => [...run].sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0)));
}

/** One signed POST, or a failed attempt without one when the secrets cannot be opened or the URL is refused. */
async function attempt(delivery: DeliveryRow, subscription: SubscriptionRow, env: Env): Promise<AttemptResult> {
  const now = Date.now();
  // The key was checked before the lease; one that went away since fails this attempt, nothing sent.
  const revealed = await openSecrets(subscription, env.ENCRYPTION_KEY, now).catch(() => null);
  const policy = revealed && refuseWebhookUrl(subscription.url, env.ALLOW_LOCAL_WEBHOOK_URLS === "true");
  const refusal = !revealed ? UNREADABLE : policy ? `URL refused: ${policy}` : null;
  if (!revealed || refusal)
    return { startedAt: now, durationMs: 0, responseStatus: null, timedOut: false, error: refusal, excerpt: null, retryAfter: null, headers: null };
  return attemptDelivery({
    url: subscription.url,
    body: delivery.body,
    contentType: delivery.contentType,
    // A replay's delivery goes out as its original, with `hook-replay`.
    deliveryId: sentAs(delivery).id,
    subscriptionId: subscription.id,
    event: delivery.event ?? "payment.changed",
    sequence: sentAs(delivery).sequence,
    replayId: delivery.replayId,
    paymentVersion: delivery.paymentVersion,
    username: revealed.username,
    password: revealed.password,
    secrets: signingSecrets(revealed, subscription),
    trace: traceOfRow(delivery),
  });
}

/** Deliveries whose subscription is gone end without an attempt. */
async function endDeliveries(db: Db, ids: string[], now: number): Promise<void> {
  await runBatch(
    db,
    ids.map((id) => endStatement(db, id, now)),
  );
}

/** Deliveries of a paused or deactivated subscription are held, unattempted, under the lease that found them. */
async function holdDeliveries(db: Db, rows: DeliveryRow[], now: number): Promise<void> {
  await runBatch(
    db,
    rows.map((row) =>
      db
        .update(webhookDeliveries)
        .set({ ...HELD, updatedAt: now })
        .where(and(eq(webhookDeliveries.id, row.id), eq(webhookDeliveries.leaseToken, row.leaseToken!))),
    ),
  );
}

/** Ends a delivery without an attempt (its subscription is gone or inactive, or it was dead-lettered). */
export async function endDelivery(db: Db, deliveryId: string, now = Date.now()): Promise<void> {
  await endStatement(db, deliveryId, now);
}

function endStatement(db: Db, deliveryId: string, now: number) {
  return db
    .update(webhookDeliveries)
    .set({ status: "failed", nextAttemptAt: null, leasedUntil: null, updatedAt: now })
    .where(and(eq(webhookDeliveries.id, deliveryId), deliveryStatusIs("pending")));
}

/** The dead-letter queue's consumer: a message that ran out of queue retries marks its delivery failed, on its shard. */
export async function consumeDeadLetters(batch: MessageBatch<QueueMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    // A replay's step that ran out of retries: the cron finds its replay stalled and sends another.
    if (isReplayStep(message)) {
      message.ack();
      continue;
    }
    const { delivery_id: deliveryId, shard } = (message.body ?? {}) as DeliveryMessage;
    const binding = typeof shard === "string" ? shardBinding(env, shard) : undefined;
    if (!binding) {
      // Nothing to mark: without a shard the row stays pending, and that shard's sweeper sends it again.
      shardNotConfigured(shard, { delivery_id: deliveryId });
      if (typeof shard === "string") message.retry({ delaySeconds: ERROR_RETRY_SECONDS });
      else message.ack();
      continue;
    }
    try {
      await endDelivery(createDb(binding), deliveryId);
      console.error(JSON.stringify({ type: "delivery_dead_lettered", shard, delivery_id: deliveryId }));
      message.ack();
    } catch (error) {
      console.error(JSON.stringify({ type: "dead_letter_error", shard, error: String(error) }));
      message.retry({ delaySeconds: ERROR_RETRY_SECONDS });
    }
  }
}
