import { env } from "cloudflare:test";
import fc from "fast-check";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb, runBatch } from "../../src/db/client";
import { healthDeliveries } from "../../src/webhooks/delivery/health";
import { call, makePayment, makeTenant, shardD1, shardOf, type User } from "../helpers/api";
import { handOver } from "../../src/webhooks/outbox/outbox";
import { subscribeToReceiver, waitFor } from "../helpers/webhooks";
import { ageForRetention, feedFromStart, logOf, runRetention } from "../helpers/feed";

// The sequence's one rule as a property (docs/interface.md, "Sequence and version"): whatever
// mix of changes, pauses, resumes, discards, health events and retention runs, every number a
// subscription gives is 1..n with no gap and no repeat, and its feed, read page by page, is its log.
const RUNS = Number(env.FUZZ_RUNS) >= 1000 ? 300 : 40;

type Step = "change" | "pause" | "resume" | "discard" | "health" | "retention";
// Changes and health events most often, so that holds and discards have something to act on.
const stepArbitrary = fc.oneof(
  { arbitrary: fc.constant<Step>("change"), weight: 4 },
  { arbitrary: fc.constant<Step>("health"), weight: 2 },
  { arbitrary: fc.constantFrom<Step>("pause", "resume", "discard", "retention"), weight: 4 },
);

interface World {
  client: User;
  processor: User;
  payments: string[];
  watched: string;
  health: string;
  /** Every number each subscription gave, by delivery id, as seen after each step. */
  seen: Map<string, Map<string, number>>;
  /** How many deliveries each subscription was made. */
  made: Map<string, number>;
}

async function world(): Promise<World> {
  const { client, processor } = await makeTenant();
  const { subscription: watched } = await subscribeToReceiver(client);
  const { subscription: health } = await subscribeToReceiver(client, { event: "subscription.health" });
  return {
    client,
    processor,
    payments: [],
    watched: watched.id,
    health: health.id,
    seen: new Map([
      [watched.id, new Map()],
      [health.id, new Map()],
    ]),
    made: new Map([
      [watched.id, 0],
      [health.id, 0],
    ]),
  };
}

const patch = (w: World, id: string, body: Record<string, unknown>) => call("PATCH", `/v1/webhooks/${id}/`, { body, headers: w.client.headers });

/** Waits until no delivery of the subscription is on its way (retention takes only what ended or is held). */
const settled = (w: World, id: string) =>
  waitFor(
    () => logOf(w.client, id),
    (rows) => rows.every((row) => row.status !== "pending"),
  );

async function step(w: World, what: Step, pick: number): Promise<void> {
  // Pauses, discards and retention act on the payment subscription three times in four.
  const target = pick % 4 === 3 ? w.health : w.watched;
  switch (what) {
    case "change": {
      // A new payment, or an event on one made before.
      if (w.payments.length === 0 || pick % 3 === 0) w.payments.push(((await makePayment(w.client)).payment as { id: string }).id);
      else {
        const id = w.payments[pick % w.payments.length]!;
        const res = await call("POST", `/v2/payments/${id}/events/`, { body: { event_code: "PU15", description: "note" }, headers: w.processor.headers });
        expect(res.status).toBe(201);
      }
      w.made.set(w.watched, w.made.get(w.watched)! + 1);
      return;
    }
    case "pause":
      // Mostly once what it had went out (so kept deliveries lie below the held ones), else at once.
      if (pick % 3 !== 0) await settled(w, target);
      expect((await patch(w, target, { is_active: false })).status).toBe(200);
      return;
    case "resume":
      expect((await patch(w, target, { is_active: true })).status).toBe(200);
      return;
    case "discard": {
      const res = await call("POST", `/v1/webhooks/${target}/held/discard/`, { headers: w.client.headers });
      expect([202, 409]).toContain(res.status);
      return;
    }
    case "health": {
      // What the consumer writes when a subscription starts failing: one event for each health subscription.
      // handed to the queue after the commit as the consumer hands them.
      const db = createDb(await shardD1(w.client.accountId));
      const event = { event: "subscription.failing" as const, subscriptionId: w.watched, at: Date.now(), detail: {} };
      const [made] = (await runBatch(db, [healthDeliveries(db, w.client.accountId, event, sql`1`, Date.now())])) as [{ id: string; status: string }[]];
      const queue = { queue: env.DELIVERIES, shard: await shardOf(w.client.accountId) };
      await handOver(
        db,
        queue,
        made.filter((row) => row.status === "pending").map((row) => row.id),
      );
      w.made.set(w.health, w.made.get(w.health)! + 1);
      return;
    }
    case "retention": {
      const rows = await settled(w, target);
      if (rows.length === 0) return;
      const upTo = rows[Math.floor(rows.length / 2)]!.sequence!;
      await ageForRetention(w.client, target, upTo);
      await runRetention(w.client, target, upTo);
      return;
    }
  }
}

/** After each step: no delivery changed its number, no two share one, and the feed read `limit` at a time is the log. */
async function check(w: World, limit: number): Promise<void> {
  for (const id of [w.watched, w.health]) {
    const log = await logOf(w.client, id);
    const seen = w.seen.get(id)!;
    for (const row of log) {
      expect(seen.get(row.id) ?? row.sequence).toBe(row.sequence);
      seen.set(row.id, row.sequence!);
    }
    expect(new Set(seen.values()).size).toBe(seen.size);
    const feed = await feedFromStart(w.client, id, limit);
    expect(feed.map((item) => [item.sequence, item.delivery_id])).toEqual(log.map((row) => [row.sequence, row.id]));
  }
}

describe("numbering, as a property", () => {
  it("gives every subscription 1..n with no gap and no repeat, and a feed equal to its log, through any mix of changes, pauses, discards, health events and retention", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(stepArbitrary, fc.nat(100)), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 3 }),
        async (steps, limit) => {
          const w = await world();
          for (const [what, pick] of steps) {
            await step(w, what, pick);
            await check(w, limit);
          }
          for (const id of [w.watched, w.health]) {
            const numbers = [...w.seen.get(id)!.values()].sort((a, b) => a - b);
            expect(numbers).toEqual(Array.from({ length: w.made.get(id)! }, (_, i) => i + 1));
          }
        },
      ),
      // The case first: delivered, paused, five held, discarded, eight more.
      { numRuns: RUNS, examples: [[[["change", 1], ["pause", 1], ...Array(5).fill(["change", 1]), ["discard", 0], ...Array(8).fill(["change", 1])], 1]] },
    );
  }, 300_000);
});
