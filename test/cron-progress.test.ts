import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { cronJobs, runJob, type CronJob } from "../src/cron";
import { JobBudget } from "../src/lib/run-budget";
import { ADMIN, call, makePayment, makeTenant, shardD1, unique, type User } from "./helpers/api";
import { recordingQueue, type LogLine } from "./helpers/cron";
import { HOOK_USER, mailbox, subscribeToReceiver } from "./helpers/webhooks";

// Every cron job makes progress under any part of the run's budget it can be given: from the
// smallest (its floor and reserve, what a run of many shards gives it) upward, repeated runs finish
// the work, no run fails, and no job's bookkeeping spends past its part (lib/run-budget.ts).
const DAY = 86_400_000;
const RUNS = 40;
/** The parts a job is given: its least, a little more, and the whole run's. */
const parts = (job: CronJob) => [job.weight.floor + job.weight.reserve, job.weight.floor + job.weight.reserve + 25, 900];
/** Queue messages a job may send in a run at the least (the sweep's share among a hundred shards' jobs). */
const LEAST_MESSAGES = 90;

interface Work {
  /** Makes work for the job; returns whether it is done. */
  make(): Promise<() => Promise<boolean>>;
}

const count = async (d1: D1Database, sql: string, ...values: unknown[]) =>
  (await d1
    .prepare(sql)
    .bind(...values)
    .first<{ n: number }>())!.n;

/** `n` rows inserted by one statement of `sql`'s recursive counter (`i` from 1 to n). */
const rows = (d1: D1Database, n: number, sql: string, ...values: unknown[]) =>
  d1
    .prepare(`with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1) ${sql}`)
    .bind(n, ...values)
    .run();

async function tenantOnA() {
  const tenant = await makeTenant({ shard: "A" });
  const { subscription } = await subscribeToReceiver(tenant.client);
  return { ...tenant, subscription, shard: await shardD1(tenant.client.accountId) };
}

const WORK: Record<string, Work> = {
  challenges: {
    async make() {
      // Subscriptions of an account that requires proof, their receiver silent at first: then it echoes, and their challenges are due.
      const tenant = await makeTenant({ shard: "A" });
      expect((await call("PATCH", `/admin/accounts/${tenant.account.id}/`, { body: { verify_endpoints: true }, headers: ADMIN })).status).toBe(200);
      const box = await mailbox({ ...HOOK_USER, echo: "none" }, `/hooks/${unique("challenged")}`);
      for (let i = 0; i < 6; i++) {
        const made = await call("POST", "/v1/webhooks/", {
          body: { event: "payment.changed", url: box.url, content_type: "application/json", ...HOOK_USER },
          headers: tenant.client.headers,
        });
        expect(made.status).toBe(201);
      }
      await mailbox({ ...HOOK_USER }, box.path);
      const shard = await shardD1(tenant.client.accountId);
      await shard
        .prepare("update webhook_subscriptions set verification_next_at = ?2 where account_id = ?1")
        .bind(tenant.client.accountId, Date.now() - 1)
        .run();
      return async () =>
        (await count(
          shard,
          "select count(*) as n from webhook_subscriptions where account_id = ?1 and verification <> 'verified'",
          tenant.client.accountId,
        )) === 0;
    },
  },
  auth_failures: {
    async make() {
      const tag = crypto.randomUUID();
      await rows(env.DB, 6_000, `insert into auth_failures (key, window_start, failures) select ?2 || '-' || i, 0, 1 from n`, tag);
      return async () => (await count(env.DB, "select count(*) as n from auth_failures where key like ?1 || '-%'", tag)) === 0;
    },
  },
  erasure: {
    async make() {
      const { client, account } = await tenantOnA();
      for (let i = 0; i < 3; i++) await makePayment(client);
      expect((await call("DELETE", `/admin/accounts/${account.id}/`, { headers: ADMIN })).status).toBe(202);
      return async () => (await count(env.DB, "select count(*) as n from accounts where id = ?1", account.id)) === 0;
    },
  },
  moves: {
    async make() {
      const { client, account } = await tenantOnA();
      for (let i = 0; i < 3; i++) await makePayment(client);
      expect((await call("POST", `/admin/accounts/${account.id}/move/`, { body: { shard: "B" }, headers: ADMIN })).status).toBe(202);
      return async () => (await call("GET", `/admin/accounts/${account.id}/`, { headers: ADMIN })).json.move === null;
    },
  },
  sweep: {
    async make() {
      const { client, subscription, shard } = await tenantOnA();
      // Deliveries whose queue message never went (due a minute ago, never handed over).
      const at = Date.now() - 60_000;
      await rows(
        shard,
        400,
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, created_at, updated_at)
         select ?2 || '-lost-' || i, ?2, ?3, 'pmt_x', '{}', 'pending', 0, ?4 + i, ?4 + i, ?4 + i from n`,
        subscription.id,
        client.accountId,
        at,
      );
      return async () =>
        (await count(shard, "select count(*) as n from webhook_deliveries where subscription_id = ?1 and enqueued_at is null", subscription.id)) === 0;
    },
  },
  idempotency: {
    async make() {
      const { client, shard } = await tenantOnA();
      await rows(
        shard,
        6_000,
        `insert into idempotency_keys (account_id, username, key, request_hash, token, locked_until, status, body, created_at) select ?2, 'u', 'k' || i, 'h', 't', 0, 201, '{}', 0 from n`,
        client.accountId,
      );
      return async () => (await count(shard, "select count(*) as n from idempotency_keys where account_id = ?1", client.accountId)) === 0;
    },
  },
  retention: {
    async make() {
      const { client, subscription, shard } = await tenantOnA();
      const aged = Date.now() - 40 * DAY;
      await rows(
        shard,
        2_500,
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, content_type, status, attempts, sequence, created_at, updated_at, test)
         select ?2 || '-old-' || i, ?2, ?3, 'pmt_x', '{"object_type":"payment"}', 'application/json', 'succeeded', 1, i, ?4 + i, ?4 + i, 0 from n`,
        subscription.id,
        client.accountId,
        aged,
      );
      return async () => (await count(shard, "select count(*) as n from webhook_deliveries where subscription_id = ?1", subscription.id)) === 0;
    },
  },
  counts: {
    async make() {
      const accounts: { client: User; shard: D1Database }[] = [];
      for (let i = 0; i < 3; i++) {
        const tenant = await tenantOnA();
        await makePayment(tenant.client);
        accounts.push(tenant);
      }
      // Behind: their payments changed after the mark the counts were folded to.
      for (const { client, shard } of accounts)
        await shard.prepare("update payments set updated_at = updated_at + 1000 where account_id = ?1").bind(client.accountId).run();
      const behind = async ({ client, shard }: { client: User; shard: D1Database }) =>
        count(
          shard,
          "select count(*) as n from payments p where p.account_id = ?1 and p.updated_at > coalesce((select counted_to from list_counts where account_id = ?1 and resource = 'payments'), 0)",
          client.accountId,
        );
      return async () => (await Promise.all(accounts.map(behind))).every((n) => n === 0);
    },
  },
  releases: {
    async make() {
      const { client, subscription, shard } = await tenantOnA();
      const at = Date.now() - 10_000;
      await rows(
        shard,
        1_500,
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, sequence, created_at, updated_at)
         select ?2 || '-held-' || i, ?2, ?3, 'pmt_held', '{}', 'held', 0, i, ?4 + i, ?4 + i from n`,
        subscription.id,
        client.accountId,
        at,
      );
      return async () =>
        (await count(shard, "select count(*) as n from webhook_deliveries where subscription_id = ?1 and status = 'held'", subscription.id)) === 0;
    },
  },
  replays: {
    async make() {
      // Running replays whose step message was lost 10 minutes ago: each is sent a step (and marked moved on).
      const { client, subscription, shard } = await tenantOnA();
      const at = Date.now() - 600_000;
      await rows(
        shard,
        25,
        `insert into webhook_replays (id, account_id, subscription_id, since, until, status, count, sent, phase, sent_sequence, created_at, updated_at)
         select ?2 || '-stalled-' || i, ?3, ?2, 0, ?4, 'running', 0, 0, 'log', 0, ?4, ?4 from n`,
        subscription.id,
        client.accountId,
        at,
      );
      return async () =>
        (await count(shard, "select count(*) as n from webhook_replays where account_id = ?1 and updated_at = ?2", client.accountId, at)) === 0;
    },
  },
  lag: {
    async make() {
      // Subscriptions that lagged and have been under their alert for 6 minutes, nothing delivered since: each has caught up.
      const { client, shard } = await tenantOnA();
      const at = Date.now();
      await rows(
        shard,
        30,
        `insert into webhook_subscriptions (id, account_id, user, event, url, content_type, credentials, secret, invoice_ids, payment_status, payment_events,
           refund_reason, instrument_number, all_payment_details, is_active, created_at, updated_at, lag_alert_ms, lagging_since, caught_up_since)
         select ?2 || '-lagging-' || i, ?2, 'u', 'payment.changed', 'https://example.com', 'application/json', 'c', 's', 0, 0, 0, 0, 0, 0, 1, ?3, ?3, 60000, ?3 - 600000, ?3 - 360000 from n`,
        client.accountId,
        at,
      );
      return async () =>
        (await count(shard, "select count(*) as n from webhook_subscriptions where account_id = ?1 and lagging_since is not null", client.accountId)) === 0;
    },
  },
};

const now = Date.now();
const jobsOnA = cronJobs(env, now).filter((job) => job.shard === "directory" || job.shard === "A");

describe("every cron job, under any part of the run's budget", () => {
  it("has a test of its progress here", () => {
    expect(jobsOnA.map((job) => job.job).sort()).toEqual(Object.keys(WORK).sort());
  });

  it.each(jobsOnA.flatMap((job) => parts(job).map((part) => [job.job, part] as const)))(
    "%s finishes its work over repeated runs given %i D1 queries a run",
    async (name, part) => {
      const done = await WORK[name]!.make();
      const sent: string[] = [];
      const bindings = { ...env, DELIVERIES: recordingQueue(sent) };
      const lines: LogLine[] = [];
      for (let run = 0; run < RUNS && !(await done()); run++) {
        const job = cronJobs(bindings, Date.now()).find((each) => each.job === name && (each.shard === "directory" || each.shard === "A"))!;
        const budget = new JobBudget({ d1Queries: part, queueMessages: LEAST_MESSAGES }, job.weight.reserve);
        lines.push(await runJob(job, bindings, budget));
        expect(budget.spent.d1Queries).toBeLessThanOrEqual(part);
      }
      expect(await done()).toBe(true);
      expect(lines.filter((line) => line.type !== "cron_job")).toEqual([]);
    },
  );
});
