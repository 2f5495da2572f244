import { env } from "cloudflare:test";
import { and, eq, like } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { webhookDeliveries } from "../../src/db/schema";
import { replayable, replayableSql, type Replayable } from "../../src/webhooks/replays/replayable";
import { makeTenant } from "../helpers/api";
import { subscribeToReceiver } from "../helpers/webhooks";

// Which deliveries a replay sends, stated once (src/webhooks/replays/replayable.ts): its
// TypeScript (for the archive's records) and its SQL (for the log's rows) agree on every case.
const CASES: [string, Replayable, boolean][] = [
  ["a numbered original", { sequence: 7, test: false, replayId: null }, true],
  ["a test delivery", { sequence: null, test: true, replayId: null }, false],
  ["a numbered delivery marked test", { sequence: 8, test: true, replayId: null }, false],
  ["a replay's delivery", { sequence: null, test: false, replayId: "rpl_1" }, false],
  ["a delivery with neither number nor replay", { sequence: null, test: false, replayId: null }, false],
];

describe("which deliveries a replay sends", () => {
  it.each(CASES)("%s: %s", (_, delivery, sent) => {
    expect(replayable(delivery)).toBe(sent);
  });

  it("says the same in SQL, on D1, for each case", async () => {
    const { client } = await makeTenant({ shard: "A" });
    const { subscription } = await subscribeToReceiver(client);
    const now = Date.now();
    await env.SHARD_A!.batch(
      CASES.map(([name, delivery], i) =>
        env
          .SHARD_A!.prepare(
            `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, sequence, test, replay_id, created_at, updated_at)
             values (?1, ?2, ?3, 'pmt_x', '{}', 'succeeded', 1, ?4, ?5, ?6, ?7, ?7)`,
          )
          .bind(
            `case-${i}-${name}`,
            subscription.id,
            client.accountId,
            delivery.sequence === null ? null : 100_000 + delivery.sequence,
            delivery.test ? 1 : 0,
            delivery.replayId,
            now + i,
          ),
      ),
    );
    const db = createDb(env.SHARD_A!);
    const rows = await db
      .select({ id: webhookDeliveries.id, sent: replayableSql() })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.subscriptionId, subscription.id), like(webhookDeliveries.id, "case-%")));
    expect(Object.fromEntries(rows.map((row) => [row.id, Boolean(row.sent)]))).toEqual(
      Object.fromEntries(CASES.map(([name, , sent], i) => [`case-${i}-${name}`, sent])),
    );
  });
});
