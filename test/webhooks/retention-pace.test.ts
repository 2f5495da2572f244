import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { RETENTION_PER_RUN, RETENTION_SIZED_FOR_BYTES } from "../../src/webhooks/upkeep/retention";
import { cronJobs, runJob, tendedShards } from "../../src/cron";
import { JobBudget } from "../../src/lib/run-budget";
import { call, makePayment, makeTenant, type User } from "../helpers/api";
import { cronRun, jobLine } from "../helpers/cron";
import { subscribeToReceiver, waitFor } from "../helpers/webhooks";

// Retention's pace (docs/interface.md, "Retention"): at least RETENTION_PER_RUN deliveries a shard
// a cron run, with every configured shard at that pace at once, each archived once. Measured on
// deliveries whose bodies are rebuilt from a payment's detail of about 9 KB: a step counts each
// as about 20 KB (the detail read, the body made), near RETENTION_SIZED_FOR_BYTES.
const DAY = 86_400_000;
const AGED = 12_800;

/** A subscription on the account's shard with AGED ended deliveries 40 days old, each a copy of one that reached the receiver. */
async function agedLog(client: User, processor: User, shard: D1Database) {
  const { subscription } = await subscribeToReceiver(client, { payment_status: true, payment_events: true });
  const { payment } = await makePayment(client);
  for (let i = 0; i < 7; i++) {
    const res = await call("POST", `/v2/payments/${payment.id}/events/`, {
      body: { event_code: "PU15", description: "d".repeat(1000) },
      headers: processor.headers,
    });
    expect(res.status).toBe(201);
  }
  const log = await waitFor(
    () => call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers }),
    (res) => res.json.count === 8 && res.json.results.every((row: { status: string }) => row.status === "succeeded"),
  );
  const last = log.json.results[0] as { id: string };
  const aged = Date.now() - 40 * DAY;
  await shard
    .prepare(
      `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, event_id, payment_version, body, flags, content_type, status, attempts, next_attempt_at,
         first_started_at, first_duration_ms, first_response_status, first_response_excerpt, first_headers, first_ended, created_at, updated_at, test)
       with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1)
       select ?2 || '-' || i, subscription_id, account_id, payment_id, event_id, payment_version, body, flags, content_type, status, attempts, null,
         ?3 + i, first_duration_ms, first_response_status, first_response_excerpt, first_headers, first_ended, ?3 + i, ?3 + i, test
       from webhook_deliveries, n where id = ?2`,
    )
    .bind(AGED, last.id, aged)
    .run();
  const size = await shard
    .prepare("select flags is not null as rebuilt, (select length(detail) from payments where id = ?2) as detail from webhook_deliveries where id = ?1")
    .bind(`${last.id}-1`, payment.id)
    .first<{ rebuilt: number; detail: number }>();
  // Rebuilt from a detail of about 9 KB: the step counts each such delivery at twice that, and more.
  expect(size!.rebuilt).toBe(1);
  expect(2 * size!.detail + 1000).toBeGreaterThan(RETENTION_SIZED_FOR_BYTES * 0.75);
  expect(2 * size!.detail + 1000).toBeLessThan(RETENTION_SIZED_FOR_BYTES);
  return { subscription, day: new Date(aged).toISOString().slice(0, 10) };
}

describe("retention's pace", () => {
  it(`removes and archives at least ${RETENTION_PER_RUN} deliveries on every shard in one cron run, each once`, async () => {
    const shards = tendedShards(env);
    expect(shards.length).toBeGreaterThanOrEqual(2);
    const logs = [];
    for (const shard of shards) {
      const { client, processor } = await makeTenant({ shard });
      logs.push({ shard, client, ...(await agedLog(client, processor, env[`SHARD_${shard}`]!)) });
    }
    const lines = await cronRun();
    expect(lines.find((line) => line.type === "invocation_limits" && line.handler === "scheduled")!.d1Queries).toBeLessThanOrEqual(1000);
    for (const { shard, client, subscription, day } of logs) {
      const retention = jobLine(lines, "retention", shard)!;
      expect(retention.type).toBe("cron_job");
      expect(retention.result.removed).toBeGreaterThanOrEqual(RETENTION_PER_RUN);
      // Archived once each: the day's objects hold exactly the deliveries removed.
      const listed = await env.ARCHIVE!.list({ prefix: `deliveries/${client.accountId}/${subscription.id}/${day}/` });
      let archived = 0;
      const ids = new Set<string>();
      for (const object of listed.objects) {
        const text = await new Response((await env.ARCHIVE!.get(object.key))!.body.pipeThrough(new DecompressionStream("gzip"))).text();
        for (const line of text.trim().split("\n")) {
          archived++;
          ids.add(JSON.parse(line).id);
        }
      }
      expect(ids.size).toBe(archived);
      const left = await env[`SHARD_${shard}`]!.prepare("select count(*) as n from webhook_deliveries where subscription_id = ?1 and created_at < ?2")
        .bind(subscription.id, Date.now() - 30 * DAY)
        .first<{ n: number }>();
      expect(archived).toBe(AGED - left!.n);
    }
  });

  it(`removes at least ${RETENTION_PER_RUN} in a run given only its floor, the least a run of many shards gives it`, async () => {
    const { client, processor } = await makeTenant({ shard: "A" });
    await agedLog(client, processor, env.SHARD_A!);
    const job = cronJobs(env, Date.now()).find((each) => each.job === "retention" && each.shard === "A")!;
    const budget = new JobBudget({ d1Queries: job.weight.floor + job.weight.reserve, queueMessages: 0 }, job.weight.reserve);
    const aged = () =>
      env
        .SHARD_A!.prepare("select count(*) as n from webhook_deliveries where created_at < ?1")
        .bind(Date.now() - 30 * DAY)
        .first<{ n: number }>();
    const before = (await aged())!.n;
    const line = await runJob(job, env, budget);
    const { removed } = line.result as { removed: number };
    expect(line.type).toBe("cron_job");
    expect(removed).toBeGreaterThanOrEqual(RETENTION_PER_RUN);
    expect(budget.spent.d1Queries).toBeLessThanOrEqual(budget.allowed.d1Queries);
    expect((await aged())!.n).toBe(before - removed);
  });
});
