import { env } from "cloudflare:test";
import { and, eq, like } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { webhookDeliveries } from "../../src/db/schema";
import { inWindow, inWindowSql, replayable, replayableSql, type Replayable } from "../../src/webhooks/replays/replayable";
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

// The window on top of it: one subscription, `since` and `until` both included, the payments named.
const T = Date.UTC(2026, 10, 1);
type Asked = { since: number; until: number; paymentIds: string[] | null };
const ALL: Asked = { since: T, until: T + 1000, paymentIds: null };
const ONE_PAYMENT: Asked = { since: T, until: T + 1000, paymentIds: ["pmt_a"] };
type WindowCase = [string, { own: boolean; createdAt: number; paymentId: string; test?: boolean }, Asked, boolean];
const WINDOW_CASES: WindowCase[] = [
  ["made at since", { own: true, createdAt: T, paymentId: "pmt_b" }, ALL, true],
  ["made at until", { own: true, createdAt: T + 1000, paymentId: "pmt_b" }, ALL, true],
  ["made just before since", { own: true, createdAt: T - 1, paymentId: "pmt_b" }, ALL, false],
  ["made just after until", { own: true, createdAt: T + 1001, paymentId: "pmt_b" }, ALL, false],
  ["another subscription's, in the window", { own: false, createdAt: T + 5, paymentId: "pmt_b" }, ALL, false],
  ["a test delivery in the window", { own: true, createdAt: T + 5, paymentId: "pmt_b", test: true }, ALL, false],
  ["of a payment named", { own: true, createdAt: T + 5, paymentId: "pmt_a" }, ONE_PAYMENT, true],
  ["of a payment not named", { own: true, createdAt: T + 5, paymentId: "pmt_b" }, ONE_PAYMENT, false],
];

describe("which deliveries a replay of a window sends", () => {
  it("agrees in TypeScript and in SQL, on D1, for each case", async () => {
    const { client } = await makeTenant({ shard: "A" });
    const { subscription } = await subscribeToReceiver(client);
    const { subscription: other } = await subscribeToReceiver(client);
    const idOf = (i: number) => `win-${i}`;
    await env.SHARD_A!.batch(
      WINDOW_CASES.map(([, delivery], i) =>
        env
          .SHARD_A!.prepare(
            `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, sequence, test, created_at, updated_at)
             values (?1, ?2, ?3, ?4, '{}', 'succeeded', 1, ?5, ?6, ?7, ?7)`,
          )
          .bind(
            idOf(i),
            delivery.own ? subscription.id : other.id,
            client.accountId,
            delivery.paymentId,
            200_000 + i,
            delivery.test ? 1 : 0,
            delivery.createdAt,
          ),
      ),
    );
    const db = createDb(env.SHARD_A!);
    const window = (asked: Asked) => ({ ...asked, accountId: client.accountId, subscriptionId: subscription.id });
    for (const [i, [name, delivery, asked, sent]] of WINDOW_CASES.entries()) {
      const ts = inWindow(
        {
          sequence: 200_000 + i,
          test: delivery.test ?? false,
          replayId: null,
          subscriptionId: delivery.own ? subscription.id : other.id,
          createdAt: delivery.createdAt,
          paymentId: delivery.paymentId,
        },
        window(asked),
      );
      const [row] = await db
        .select({ sent: inWindowSql(window(asked)) })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.id, idOf(i)));
      expect([name, ts, Boolean(row!.sent)]).toEqual([name, sent, sent]);
    }
  });
});
