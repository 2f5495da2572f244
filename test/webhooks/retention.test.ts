import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import worker from "../../src/index";
import { applyRetention, retentionDays } from "../../src/webhooks";
import { RETENTION_PER_RUN } from "../../src/webhooks/upkeep/retention";
import { createScheduledController } from "cloudflare:test";
import { vi } from "vitest";
import { BASE, call, makePayment, makeTenant, type User } from "../helpers/api";
import { subscribeToReceiver, waitFor } from "../helpers/webhooks";

const DAY = 86_400_000;
// Retention runs per shard; these tests keep their tenants on one.
const SHARD = "A";
const shard = env.SHARD_A!;
const db = () => createDb(shard);

/** A subscription with `n` payments' deliveries, all succeeded. */
async function loggedDeliveries(client: User, n: number) {
  const { subscription } = await subscribeToReceiver(client);
  for (let i = 0; i < n; i++) await makePayment(client);
  const log = await waitFor(
    () => call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers }),
    (res) => res.json.count === n && res.json.results.every((row: { status: string }) => row.status === "succeeded"),
  );
  return { subscription, deliveries: log.json.results as { id: string; created: string }[] };
}

/** Moves a delivery's whole history `days` into the past (as if made and ended then). */
async function age(deliveryId: string, days: number) {
  const shift = days * DAY;
  await shard.batch([
    shard.prepare("update webhook_deliveries set created_at = created_at - ?1, updated_at = updated_at - ?1 where id = ?2").bind(shift, deliveryId),
    shard.prepare("update webhook_deliveries set first_started_at = first_started_at - ?1 where id = ?2").bind(shift, deliveryId),
    shard.prepare("update webhook_attempts set started_at = started_at - ?1 where delivery_id = ?2").bind(shift, deliveryId),
  ]);
}

async function archiveLines(client: User, subscriptionId: string, day: string) {
  const res = await fetchRaw(client, `/v1/webhooks/${subscriptionId}/archive/${day}/`);
  if (res.status !== 200) return { status: res.status, lines: [] as Record<string, unknown>[] };
  expect(res.headers.get("content-type")).toBe("application/gzip");
  const text = await new Response(res.body!.pipeThrough(new DecompressionStream("gzip"))).text();
  return {
    status: 200,
    lines: text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

async function fetchRaw(client: User, path: string) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`${BASE}${path}`, { headers: client.headers }), env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

describe("retention", () => {
  it.each([
    [undefined, 30],
    ["7", 7],
    ["1", 1],
    ["0", 30],
    ["-3", 30],
    ["2.5", 30],
    ["thirty", 30],
  ])("reads RETENTION_DAYS=%j as %i days", (text, days) => {
    expect(retentionDays(text)).toBe(days);
  });

  it("archives ended deliveries past RETENTION_DAYS, then removes them; the log answers 404 and the archive returns each record as the log showed it", async () => {
    const { client } = await makeTenant({ shard: SHARD });
    const { subscription, deliveries } = await loggedDeliveries(client, 3);
    const [old, older, recent] = deliveries;
    // A second attempt for one of them (its first is on its row; later ones in webhook_attempts).
    expect((await call("POST", `/v1/webhooks/${subscription.id}/deliveries/${old!.id}/redeliver/`, { headers: client.headers })).status).toBe(202);
    await waitFor(
      () => call("GET", `/v1/webhooks/${subscription.id}/deliveries/${old!.id}/`, { headers: client.headers }),
      (res) => res.json.attempts.length === 2 && res.json.status === "succeeded",
    );
    const records = new Map<string, unknown>();
    await age(old!.id, 31);
    await age(older!.id, 31);
    for (const { id } of [old!, older!])
      records.set(id, (await call("GET", `/v1/webhooks/${subscription.id}/deliveries/${id}/`, { headers: client.headers })).json);

    const report = await applyRetention(db(), env.ARCHIVE, 30, Date.now());
    expect(report.removed).toBeGreaterThanOrEqual(2);
    for (const { id } of [old!, older!])
      expect((await call("GET", `/v1/webhooks/${subscription.id}/deliveries/${id}/`, { headers: client.headers })).status).toBe(404);
    expect((await call("GET", `/v1/webhooks/${subscription.id}/deliveries/${recent!.id}/`, { headers: client.headers })).status).toBe(200);
    expect((await call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers })).json.count).toBe(1);
    const attempts = await shard
      .prepare("select count(*) as n from webhook_attempts where delivery_id in (?, ?)")
      .bind(old!.id, older!.id)
      .first<{ n: number }>();
    expect(attempts!.n).toBe(0);
    expect((records.get(old!.id) as { attempts: unknown[] }).attempts).toHaveLength(2);

    const day = new Date(Date.parse(old!.created) - 31 * DAY).toISOString().slice(0, 10);
    const archived = await archiveLines(client, subscription.id, day);
    expect(archived.status).toBe(200);
    expect(archived.lines).toHaveLength(2);
    for (const line of archived.lines) expect(line).toEqual({ subscription_id: subscription.id, ...(records.get(line.id as string) as object) });
  });

  it("keeps what is recent or still pending, and removes in bounded runs", async () => {
    const { client } = await makeTenant({ shard: SHARD });
    const { subscription, deliveries } = await loggedDeliveries(client, 1);
    const [made] = deliveries;
    await age(made!.id, 40);
    // Copies of the aged delivery: more than one run removes (each run here at most 100).
    const copies = 130;
    await shard
      .prepare(
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, event_id, payment_version, body, flags, content_type, status, attempts, next_attempt_at, created_at, updated_at, test)
       with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1)
       select ?2 || '-' || i, subscription_id, account_id, payment_id, event_id, payment_version, body, flags, content_type, status, attempts, null, created_at, updated_at, test from webhook_deliveries, n where id = ?3`,
      )
      .bind(copies, made!.id, made!.id)
      .run();
    // An old delivery still being retried stays whatever its age.
    await shard
      .prepare("update webhook_deliveries set status = 'pending', next_attempt_at = ?1 where id = ?2")
      .bind(Date.now() + DAY, `${made!.id}-1`)
      .run();
    const inLog = async () =>
      (await shard.prepare("select count(*) as n from webhook_deliveries where subscription_id = ?").bind(subscription.id).first<{ n: number }>())!.n;
    expect(await inLog()).toBe(copies + 1);

    const first = await applyRetention(db(), env.ARCHIVE, 30, Date.now(), { max: 100 });
    expect(first.removed).toBe(100);
    for (let run = 0; run < 5 && (await inLog()) > 1; run++) await applyRetention(db(), env.ARCHIVE, 30, Date.now(), { max: 100 });
    expect(await inLog()).toBe(1);
    const left = await shard
      .prepare("select id, status from webhook_deliveries where subscription_id = ?")
      .bind(subscription.id)
      .first<{ id: string; status: string }>();
    expect(left).toEqual({ id: `${made!.id}-1`, status: "pending" });
    // A shorter RETENTION_DAYS reaches younger deliveries.
    const { deliveries: fresh } = await loggedDeliveries(client, 1);
    await age(fresh[0]!.id, 8);
    await applyRetention(db(), env.ARCHIVE, 30, Date.now());
    expect(
      (
        await call(
          "GET",
          `/v1/webhooks/${(await shard.prepare("select subscription_id as s from webhook_deliveries where id = ?").bind(fresh[0]!.id).first<{ s: string }>())!.s}/deliveries/${fresh[0]!.id}/`,
          { headers: client.headers },
        )
      ).status,
    ).toBe(200);
    await applyRetention(db(), env.ARCHIVE, 7, Date.now());
    expect(await shard.prepare("select id from webhook_deliveries where id = ?").bind(fresh[0]!.id).first()).toBeNull();
  });

  it("archives nothing twice when a run stops between archiving and removing", async () => {
    const { client } = await makeTenant({ shard: SHARD });
    const { subscription, deliveries } = await loggedDeliveries(client, 2);
    for (const { id } of deliveries) await age(id, 45);
    // The removal batch fails once (D1 unreachable): the archive is written, the rows stay.
    let batches = 0;
    const failing = new Proxy(shard, {
      get(target, name) {
        if (name === "batch")
          return (statements: D1PreparedStatement[]) => (++batches === 2 ? Promise.reject(new Error("D1 went away")) : target.batch(statements));
        const value = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await expect(applyRetention(createDb(failing), env.ARCHIVE, 30, Date.now())).rejects.toThrow("D1 went away");
    expect((await call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers })).json.count).toBe(2);
    await applyRetention(db(), env.ARCHIVE, 30, Date.now());
    expect((await call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers })).json.count).toBe(0);
    const day = new Date(Date.parse(deliveries[0]!.created) - 45 * DAY).toISOString().slice(0, 10);
    const { lines } = await archiveLines(client, subscription.id, day);
    expect(lines.map((line) => line.id).sort()).toEqual(deliveries.map((row) => row.id).sort());
  });

  it(`removes and archives ${RETENTION_PER_RUN} aged deliveries of a shard in one cron run, within the run's budget, in new objects a day's archive answers as one, each once`, async () => {
    const { client } = await makeTenant({ shard: SHARD });
    const { subscription, deliveries } = await loggedDeliveries(client, 1);
    const [made] = deliveries;
    await age(made!.id, 40);
    await shard
      .prepare(
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, event_id, payment_version, body, flags, content_type, status, attempts, next_attempt_at, created_at, updated_at, test)
       with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1)
       select ?2 || '-' || i, subscription_id, account_id, payment_id, event_id, payment_version, body, flags, content_type, status, attempts, null, created_at + i, updated_at, test from webhook_deliveries, n where id = ?2`,
      )
      .bind(RETENTION_PER_RUN + 500, made!.id)
      .run();
    const log = vi.spyOn(console, "log");
    const warn = vi.spyOn(console, "warn");
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    const lines = [...log.mock.calls, ...warn.mock.calls]
      .map(([line]) => String(line))
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line));
    const retention = lines.find((line) => line.type === "cron_job" && line.job === "retention" && line.shard === SHARD);
    expect(retention.result.removed).toBeGreaterThanOrEqual(RETENTION_PER_RUN);
    // The whole run within an invocation's D1 queries (the development layer counts them).
    const run = lines.find((line) => line.type === "invocation_limits" && line.handler === "scheduled");
    expect(run.d1Queries).toBeLessThanOrEqual(1000);
    const left = (await shard.prepare("select count(*) as n from webhook_deliveries where subscription_id = ?").bind(subscription.id).first<{ n: number }>())!
      .n;
    expect(left).toBe(RETENTION_PER_RUN + 501 - retention.result.removed);
    // The next run removes the rest; the day's archive holds every one of them, once.
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }), env, createExecutionContext());
    expect(
      (await shard.prepare("select count(*) as n from webhook_deliveries where subscription_id = ?").bind(subscription.id).first<{ n: number }>())!.n,
    ).toBe(0);
    const day = new Date(Date.parse(made!.created) - 40 * DAY).toISOString().slice(0, 10);
    const objects = await env.ARCHIVE!.list({ prefix: `deliveries/${client.accountId}/${subscription.id}/${day}/` });
    expect(objects.objects.length).toBeGreaterThan(1);
    const { lines: archived } = await archiveLines(client, subscription.id, day);
    const ids = archived.map((line) => line.id as string);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(RETENTION_PER_RUN + 501);
  });

  it("keeps health buckets 90 days", async () => {
    const { client } = await makeTenant({ shard: SHARD });
    const { subscription } = await loggedDeliveries(client, 1);
    const bucket = (daysAgo: number) => Math.floor((Date.now() - daysAgo * DAY) / 300_000) * 300_000;
    for (const daysAgo of [100, 80]) {
      await shard
        .prepare("insert into webhook_stats (subscription_id, bucket_start, attempts, succeeded, failed, pending) values (?, ?, 1, 1, 0, 0)")
        .bind(subscription.id, bucket(daysAgo))
        .run();
    }
    await applyRetention(db(), env.ARCHIVE, 30, Date.now());
    const kept = await shard
      .prepare("select bucket_start as b from webhook_stats where subscription_id = ? order by b")
      .bind(subscription.id)
      .all<{ b: number }>();
    expect(kept.results.map((row) => row.b)).not.toContain(bucket(100));
    expect(kept.results.map((row) => row.b)).toContain(bucket(80));
  });

  it("answers the archive only for the account's own subscription and a real day", async () => {
    const { client } = await makeTenant({ shard: SHARD });
    const other = await makeTenant({ shard: SHARD });
    const { subscription } = await loggedDeliveries(client, 1);
    expect((await fetchRaw(client, `/v1/webhooks/${subscription.id}/archive/2026-01-01/`)).status).toBe(404);
    expect((await fetchRaw(other.client, `/v1/webhooks/${subscription.id}/archive/2026-01-01/`)).status).toBe(404);
    const bad = await call("GET", `/v1/webhooks/${subscription.id}/archive/2026-13-01/`, { headers: client.headers });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.json)).toEqual(["day"]);
  });
});
