import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, makePayment, makeTenant, shardD1, shardOf } from "../helpers/api";
import { allEnded, HOOK_USER, mailbox, receivedAt, subscribeToReceiver, waitFor } from "../helpers/webhooks";
import { CAUGHT_UP_AFTER_MS, lagStep, type LagState } from "../../src/webhooks/subscriptions/lag";
import { settleLagging } from "../../src/webhooks/delivery/lag-alert";
import { createDb } from "../../src/db/client";

const NOW = 1_800_000_000_000;
const calm: LagState = { laggingSince: null, caughtUpSince: null };
const lagging: LagState = { laggingSince: NOW - 60_000, caughtUpSince: null };

describe("lagStep", () => {
  // [case, state, p95, alert, next state, told]
  it.each([
    ["calm, under its alert: nothing", calm, 500, 1000, calm, null],
    ["calm, nothing measured: nothing", calm, null, 1000, calm, null],
    ["calm, over: lagging, told", calm, 1500, 1000, { laggingSince: NOW, caughtUpSince: null }, "subscription.lagging"],
    ["lagging, still over: nothing", lagging, 1500, 1000, lagging, null],
    ["lagging, under: under since now", lagging, 500, 1000, { ...lagging, caughtUpSince: NOW }, null],
    ["lagging, nothing measured: under since now", lagging, null, 1000, { ...lagging, caughtUpSince: NOW }, null],
    [
      "under for less than 5 minutes: nothing",
      { ...lagging, caughtUpSince: NOW - CAUGHT_UP_AFTER_MS + 1 },
      500,
      1000,
      { ...lagging, caughtUpSince: NOW - CAUGHT_UP_AFTER_MS + 1 },
      null,
    ],
    ["under for 5 minutes: caught up, told", { ...lagging, caughtUpSince: NOW - CAUGHT_UP_AFTER_MS }, 500, 1000, calm, "subscription.caught_up"],
    ["under a while, then over again: still lagging, the wait starts over", { ...lagging, caughtUpSince: NOW - 1000 }, 1500, 1000, lagging, null],
    ["at its alert exactly: not over", calm, 1000, 1000, calm, null],
    ["the alert turned off while lagging: dropped, nothing told", lagging, 1500, null, calm, null],
  ] as const)("%s", (_name, state, p95, alert, next, tell) => {
    expect(lagStep(state, p95, alert, NOW)).toEqual({ next, tell });
  });
});

describe("the lag alert", () => {
  it("tells health subscriptions once when a subscription's p95 lag passes its lag_alert_ms, and once when it has stayed under for 5 minutes", async () => {
    const { client } = await makeTenant();
    const { subscription: health, box: healthBox } = await subscribeToReceiver(client, { event: "subscription.health" });
    const { subscription, box } = await subscribeToReceiver(client, { lag_alert_ms: 200 });
    expect(subscription.lag_alert_ms).toBe(200);
    await mailbox({ secret: subscription.secret, ...HOOK_USER, delayMs: 400 }, box.path);
    const { buyer, supplier } = await makePayment(client);
    for (let i = 0; i < 3; i++) await makePayment(client, { buyer, supplier });
    await allEnded(client, [subscription.id]);
    const told = await waitFor(
      () => receivedAt(healthBox),
      (got) => got.length >= 1,
    );
    const first = JSON.parse(told[0]!.body);
    expect(first).toMatchObject({ object_type: "subscription", object_id: subscription.id, event: "subscription.lagging", lag_alert_ms: 200 });
    expect(first.p95_lag_ms).toBeGreaterThan(200);
    // Later deliveries that still lag tell nothing more.
    await makePayment(client, { buyer, supplier });
    await allEnded(client, [subscription.id, health.id]);
    expect((await receivedAt(healthBox)).map((r) => JSON.parse(r.body).event)).toEqual(["subscription.lagging"]);

    // Nothing more is delivered, and the window's lags age out (their buckets removed here): the
    // cron finds it under its alert, and 5 minutes later (moved back here) it has caught up, told once.
    const d1 = await shardD1(client.accountId);
    await d1.prepare("delete from webhook_stats where subscription_id = ?").bind(subscription.id).run();
    const db = createDb(d1);
    const queue = { queue: env.DELIVERIES, shard: await shardOf(client.accountId) };
    expect(await settleLagging(db, queue, Date.now())).toEqual({ looked: 1, changed: 1 });
    const state = () => d1.prepare("select lagging_since, caught_up_since from webhook_subscriptions where id = ?").bind(subscription.id).first();
    expect(await state()).toMatchObject({ lagging_since: expect.any(Number), caught_up_since: expect.any(Number) });
    expect(await settleLagging(db, queue, Date.now())).toEqual({ looked: 1, changed: 0 });
    await d1.prepare("update webhook_subscriptions set caught_up_since = caught_up_since - ? where id = ?").bind(CAUGHT_UP_AFTER_MS, subscription.id).run();
    expect(await settleLagging(db, queue, Date.now())).toEqual({ looked: 1, changed: 2 });
    expect(await state()).toEqual({ lagging_since: null, caught_up_since: null });
    expect(await settleLagging(db, queue, Date.now())).toEqual({ looked: 0, changed: 0 });
    const all = await waitFor(
      () => receivedAt(healthBox),
      (got) => got.length >= 2,
    );
    await allEnded(client, [health.id]);
    expect((await receivedAt(healthBox)).map((r) => JSON.parse(r.body).event)).toEqual(["subscription.lagging", "subscription.caught_up"]);
    expect(JSON.parse(all[1]!.body).object_id).toBe(subscription.id);
    const record = await call("GET", `/v1/webhooks/${subscription.id}/`, { headers: client.headers });
    expect(record.json.lag_alert_ms).toBe(200);
  });

  it("tells nothing for a subscription whose alert is off", async () => {
    const { client } = await makeTenant();
    const { subscription: health, box: healthBox } = await subscribeToReceiver(client, { event: "subscription.health" });
    const { subscription, box } = await subscribeToReceiver(client, { lag_alert_ms: null });
    await mailbox({ secret: subscription.secret, ...HOOK_USER, delayMs: 300 }, box.path);
    await makePayment(client);
    await allEnded(client, [subscription.id, health.id]);
    expect(await receivedAt(healthBox)).toEqual([]);
  });
});
