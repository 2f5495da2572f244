import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import type { DeliveryMessage } from "../../src/webhooks";
import { LOST_AFTER_MS, sweepOutbox } from "../../src/webhooks/upkeep/sweeper";
import { call, d1Timing, makePayment, makeTenant, writtenByTable } from "../helpers/api";
import { receivedAt, subscribeToReceiver, waitFor } from "../helpers/webhooks";

const shard = env.SHARD_A!;

/** A queue that keeps the ids sent to it. */
function keepingQueue() {
  const sent: string[] = [];
  const queue = {
    send: async (body: DeliveryMessage) => void sent.push(body.delivery_id),
    sendBatch: async (messages: { body: DeliveryMessage }[]) => void messages.forEach((m) => sent.push(m.body.delivery_id)),
  } as unknown as Queue<DeliveryMessage>;
  return { queue: { queue, shard: "A" }, sent };
}

type Row = { created: number; enqueued?: number | null; leasedUntil?: number | null; status?: string };

/** A subscription with delivery rows as given (handed over at creation unless `enqueued` says otherwise), none of them in the real queue. */
async function withRows(rows: Row[]) {
  const { client } = await makeTenant({ shard: "A" });
  const { subscription } = await subscribeToReceiver(client);
  const ids: string[] = [];
  for (const row of rows) {
    const id = crypto.randomUUID();
    ids.push(id);
    await shard
      .prepare(
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, enqueued_at, leased_until, lease_token, created_at, updated_at)
         values (?, ?, ?, 'pmt_test', '{}', ?, 0, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        id,
        subscription.id,
        client.accountId,
        row.status ?? "pending",
        row.created,
        row.enqueued === undefined ? row.created : row.enqueued,
        row.leasedUntil ?? null,
        row.leasedUntil ? "token" : null,
        row.created,
        row.created,
      )
      .run();
  }
  return { client, subscription, ids };
}

/**
 * The tests' clock: ahead of the real one and further ahead in each test, so that each test's rows
 * come after the mark the last test's sweep left (a stamp is never older than the moment its write
 * started, so in the service no delivery comes before the mark).
 */
let clock = Date.now() + 5 * 60_000;
const later = () => (clock += 10 * 60_000);

const mark = async () => (await shard.prepare("select at from sweep_marks where name = 'fresh'").first<{ at: number }>())?.at;

describe("the sweeper's look at fresh deliveries (handed over at their creation, not in the due index)", () => {
  it.each([
    ["lost: unleased past LOST_AFTER_MS", { created: -LOST_AFTER_MS - 5_000 }, true],
    ["not yet lost: younger than LOST_AFTER_MS", { created: -LOST_AFTER_MS + 30_000 }, false],
    ["in flight: its lease holds", { created: -LOST_AFTER_MS - 5_000, leasedUntil: 60_000 }, false],
    ["its worker died: its lease lapsed", { created: -LOST_AFTER_MS - 5_000, leasedUntil: -1_000 }, true],
    ["ended", { created: -LOST_AFTER_MS - 5_000, status: "succeeded" }, false],
  ] as const)("%s", async (_, row, resent) => {
    const now = later();
    const { ids } = await withRows([{ ...row, created: now + row.created, leasedUntil: "leasedUntil" in row ? now + row.leasedUntil : null }]);
    const { queue, sent } = keepingQueue();
    await sweepOutbox(createDb(shard), queue, now);
    expect(sent.includes(ids[0]!)).toBe(resent);
    // Re-sent, it is handed over anew: on the due index from then on, and not re-sent by the next look.
    const again = keepingQueue();
    await sweepOutbox(createDb(shard), again.queue, now + 1);
    expect(again.sent).not.toContain(ids[0]);
    if (resent) {
      const stored = await shard
        .prepare("select enqueued_at, leased_until from webhook_deliveries where id = ?")
        .bind(ids[0])
        .first<{ enqueued_at: number; leased_until: number | null }>();
      expect(stored).toEqual({ enqueued_at: now, leased_until: null });
    }
  });

  it("moves its mark up to LOST_AFTER_MS ago, and finds a lapsed lease behind the mark on the leased index", async () => {
    const now = later();
    const { queue } = keepingQueue();
    await sweepOutbox(createDb(shard), queue, now);
    expect(await mark()).toBe(now - LOST_AFTER_MS);
    const { ids } = await withRows([{ created: now - 20 * 60_000, leasedUntil: now - 1 }]);
    const next = keepingQueue();
    await sweepOutbox(createDb(shard), next.queue, now);
    expect(next.sent).toEqual([ids[0]]);
  });

  it("re-sends every lost one of a window that holds more than a round", async () => {
    const now = later();
    const created = now - LOST_AFTER_MS - 1_000;
    const { ids } = await withRows(Array.from({ length: 7 }, (_, i) => ({ created: created - i })));
    const { queue, sent } = keepingQueue();
    await sweepOutbox(createDb(shard), queue, now, { round: 3 });
    expect(sent.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
  });

  it("leaves a fresh delivery that a move holds alone, and its mark passes it", async () => {
    const now = later();
    const created = now - LOST_AFTER_MS - 1_000;
    const { client, ids } = await withRows([{ created }]);
    await shard.prepare("insert into moves (account_id, state, started_at) values (?, 'draining', ?)").bind(client.accountId, now).run();
    try {
      const { queue, sent } = keepingQueue();
      await sweepOutbox(createDb(shard), queue, now);
      expect(sent).not.toContain(ids[0]);
      expect(await mark()).toBe(now - LOST_AFTER_MS);
    } finally {
      await shard.prepare("delete from moves where account_id = ?").bind(client.accountId).run();
    }
  });

  it("writes no due entry for a change's deliveries: each writes its row and its id", async () => {
    const { client, processor } = await makeTenant();
    const boxes = [(await subscribeToReceiver(client)).box, (await subscribeToReceiver(client, { payment_status: true })).box];
    const { payment } = await makePayment(client);
    const event = await call("POST", `/v2/payments/${payment.id}/events/`, {
      body: { event_code: "PU10", description: "Sent", status: "in-progress" },
      headers: processor.headers,
      bindings: { SERVER_TIMING: "true" },
    });
    expect(event.status).toBe(201);
    const byTable = writtenByTable(event);
    expect(byTable.webhook_deliveries).toBe(2 * 2);
    expect(byTable.payment_events).toBe(1);
    expect(d1Timing(event).rowsWritten).toBeGreaterThan(0);
    for (const box of boxes)
      await waitFor(
        () => receivedAt(box),
        (received) => received.length === 2,
      );
  });
});
