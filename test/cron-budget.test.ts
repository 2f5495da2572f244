import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CRON_BUDGET } from "../src/cron";
import { makeTenant } from "./helpers/api";
import { cronRun, jobLine, recordingQueue } from "./helpers/cron";
import { subscribeToReceiver } from "./helpers/webhooks";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a cron run's budget", () => {
  it(`hands a backlog a queue outage left to the queue ${CRON_BUDGET.queueMessages} messages a run at most, says what it left, and the next runs send the rest, each once`, async () => {
    const { client } = await makeTenant({ shard: "B" });
    const { subscription } = await subscribeToReceiver(client);
    const backlog = CRON_BUDGET.queueMessages + 2_000;
    const now = Date.now();
    // Deliveries never handed over (their sends failed), due since a minute.
    await env
      .SHARD_B!.prepare(
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, enqueued_at, created_at, updated_at)
       with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1)
       select 'lost-' || i, ?2, ?3, 'pmt_test', '{}', 'pending', 0, ?4 + i, null, ?4 + i, ?4 + i from n`,
      )
      .bind(backlog, subscription.id, client.accountId, now - 60_000 - backlog)
      .run();
    const sent: string[] = [];
    const queue = { DELIVERIES: recordingQueue(sent) };
    const first = await cronRun(queue);
    const sweep = jobLine(first, "sweep", "B")!;
    expect(sweep.queue_messages).toBeLessThanOrEqual(CRON_BUDGET.queueMessages);
    expect(sent.length).toBe(sweep.queue_messages);
    expect(sent.length).toBeLessThan(backlog);
    // The whole run within an invocation's D1 queries, and no connection of it waited.
    const run = first.find((line) => line.type === "invocation_limits" && line.handler === "scheduled")!;
    expect(run.d1Queries).toBeLessThanOrEqual(CRON_BUDGET.d1Queries);
    expect(run.waitedConnections).toBe(0);
    for (let i = 0; i < 5 && new Set(sent).size < backlog; i++) await cronRun(queue);
    expect(sent.length).toBe(backlog);
    expect(new Set(sent).size).toBe(backlog);
  });
});
