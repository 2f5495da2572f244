import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { applyRetention } from "../../src/webhooks/upkeep/retention";
import { continueErasures } from "../../src/services/erasure";
import { continueReplay, resumeStalledReplays, SENT_AT_ONCE, STALLED_MS } from "../../src/webhooks/replays/steps";
import { ADMIN, call, makePayment, makeTenant, type User } from "../helpers/api";
import { receivedAt, subscribeToReceiver, waitFor, type Box } from "../helpers/webhooks";

// Replay (docs/interface.md, "Replay"): a window across the archive and the log, each original
// once, in sequence order, byte-equal to what was archived. The window's size: the figure
// is 30,000 deliveries of which 20,000 archived (REPLAY_DELIVERIES=30000); CI runs a tenth of it.
const DAY = 86_400_000;
const TOTAL = Number(env.REPLAY_DELIVERIES ?? "3000");
const ARCHIVED = Math.round((TOTAL * 2) / 3);
/** A replay sends about a hundred a second (docs/performance.md): the wait and the test's time grow with the window. */
const WAIT_MS = 120_000 + TOTAL * 25;

type Sent = { queue: Queue; sent: { replay_id?: string; delivery_id?: string }[] };
/** A queue that keeps what it is given (the test runs the replay's steps itself). */
function keptQueue(): Sent {
  const sent: Sent["sent"] = [];
  const queue = {
    send: async (body: Sent["sent"][number]) => void sent.push(body),
    sendBatch: async (messages: { body: Sent["sent"][number] }[]) => void sent.push(...messages.map((m) => m.body)),
  } as unknown as Queue;
  return { queue, sent };
}

/**
 * A subscription with `total` ended deliveries, copies of one that reached the receiver, made
 * over the last 40 days in sequence order: the first `archived` of them 40 days old (retention
 * archives and removes them), the rest a day old (in the log). Each copy has its own sequence,
 * and its own body (a stored body naming its number), as archived and as sent again.
 */
async function windowOfDeliveries(client: User, shard: "A" | "B", total: number, archived: number) {
  const { subscription, box } = await subscribeToReceiver(client, { payment_status: true });
  const { payment } = await makePayment(client);
  const first = await waitFor(
    () => call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers }),
    (res) => res.json.count === 1 && res.json.results[0].status === "succeeded",
  );
  const original = first.json.results[0] as { id: string };
  const now = Date.now();
  await env[`SHARD_${shard}`]!.prepare(
    `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, event_id, payment_version, body, flags, content_type, status, attempts, next_attempt_at,
       first_started_at, first_duration_ms, first_response_status, first_response_excerpt, first_headers, first_ended, created_at, updated_at, test, sequence)
     with recursive n(i) as (select 1 union all select i + 1 from n where i < ?2)
     select ?1 || '-' || i, subscription_id, account_id, payment_id, event_id, payment_version, '{"copy":' || i || ',"of":"' || ?1 || '"}', null, content_type, status, attempts, null,
       first_started_at, first_duration_ms, first_response_status, first_response_excerpt, first_headers, first_ended,
       case when i <= ?3 then ?4 + i else ?5 + i end, case when i <= ?3 then ?4 + i else ?5 + i end, test, 1000 + i
     from webhook_deliveries, n where id = ?1`,
  )
    .bind(original.id, total, archived, now - 40 * DAY, now - DAY)
    .run();
  // The original itself is made now: outside a window that ends a day ago.
  // Retention's runs (10,000 deliveries a run at most) until nothing more is removed.
  let removed = 0;
  for (let run = 0; run < 10; run++) {
    const step = await applyRetention(createDb(env[`SHARD_${shard}`]!), env.ARCHIVE, 30, now);
    removed += step.archived;
    if (step.removed === 0) break;
  }
  expect(removed).toBe(archived);
  return {
    subscription,
    box,
    paymentId: payment.id as string,
    agedFrom: now - 40 * DAY,
    since: new Date(now - 41 * DAY).toISOString(),
    until: new Date(now - DAY + total + 1).toISOString(),
  };
}

/** The bodies the archive holds, by delivery id. */
async function archivedBodies(accountId: string, subscriptionId: string): Promise<Map<string, string>> {
  const bodies = new Map<string, string>();
  const listed = await env.ARCHIVE!.list({ prefix: `deliveries/${accountId}/${subscriptionId}/` });
  for (const object of listed.objects) {
    const text = await new Response((await env.ARCHIVE!.get(object.key))!.body.pipeThrough(new DecompressionStream("gzip"))).text();
    for (const line of text.trim().split("\n")) {
      const record = JSON.parse(line) as { id: string; body: string };
      bodies.set(record.id, record.body);
    }
  }
  return bodies;
}

/** A running replay's record made on the shard, with no step message: only the test's own steps run. */
async function replayRow(
  shard: "A" | "B",
  id: string,
  of: { accountId: string; subscriptionId: string },
  window: { since: number; until: number },
  count: number,
  at: number,
) {
  await env[`SHARD_${shard}`]!.prepare(
    `insert into webhook_replays (id, account_id, subscription_id, since, until, status, count, sent, phase, sent_sequence, created_at, updated_at)
     values (?1, ?2, ?3, ?4, ?5, 'running', ?6, 0, 'log', 0, ?7, ?7)`,
  )
    .bind(id, of.accountId, of.subscriptionId, window.since, window.until, count, at)
    .run();
}

const replayOf = (box: Box, replayId: string) => async () => (await receivedAt(box)).filter((item) => item.headers["hook-replay"] === replayId);

describe("replay", () => {
  it(
    `sends each of ${TOTAL} deliveries once, ${ARCHIVED} of them from the archive, in sequence order, byte-equal to the archive's bodies`,
    async () => {
      const { client } = await makeTenant({ shard: "A" });
      const { subscription, box, since, until } = await windowOfDeliveries(client, "A", TOTAL, ARCHIVED);
      const path = `/v1/webhooks/${subscription.id}/replay/`;

      const dry = await call("POST", path, { body: { since, until, dry_run: true }, headers: client.headers });
      expect(dry.status).toBe(200);
      expect(dry.json).toEqual({ count: TOTAL });

      const started = await call("POST", path, { body: { since, until }, headers: client.headers });
      expect(started.status).toBe(202);
      expect(started.json).toMatchObject({ status: "running", count: TOTAL, sent: 0, since, payment_id: null });
      const replayId = started.json.id as string;

      // Its record first (a light read), then what the receiver got.
      const done = await waitFor(
        () => call("GET", `/v1/webhooks/${subscription.id}/replays/${replayId}/`, { headers: client.headers }),
        (res) => res.json.status === "done",
        WAIT_MS,
      );
      expect(done.json).toMatchObject({ count: TOTAL, sent: TOTAL });
      const received = await waitFor(replayOf(box, replayId), (items) => items.length >= TOTAL);

      // Each once, as its original: its id, sequence and version, and the archive's bytes for the archived ones.
      const ids = received.map((item) => item.headers["webhook-id"]!);
      expect(new Set(ids).size).toBe(TOTAL);
      expect(received.length).toBe(TOTAL);
      const archived = await archivedBodies(client.accountId, subscription.id);
      expect(archived.size).toBe(ARCHIVED);
      let fromArchive = 0;
      for (const item of received) {
        const id = item.headers["webhook-id"]!;
        const copy = Number(id.slice(id.lastIndexOf("-") + 1));
        expect(item.headers["hook-sequence"]).toBe(String(1000 + copy));
        expect(item.body).toBe(archived.get(id) ?? `{"copy":${copy},"of":"${id.slice(0, id.lastIndexOf("-"))}"}`);
        if (archived.has(id)) fromArchive++;
        expect(item.verified?.hmac && item.verified?.standard).toBe(true);
      }
      expect(fromArchive).toBe(ARCHIVED);

      // In sequence order, a hundred at a time: no first attempt of a hundred started before every one of the hundred before it.
      const rows = await env
        .SHARD_A!.prepare("select replay_sequence, first_started_at, created_at from webhook_deliveries where replay_id = ?1 order by replay_sequence")
        .bind(replayId)
        .all<{ replay_sequence: number; first_started_at: number; created_at: number }>();
      expect(rows.results).toHaveLength(TOTAL);
      for (let i = 1; i < rows.results.length; i++) expect(rows.results[i]!.created_at).toBeGreaterThan(rows.results[i - 1]!.created_at);
      for (let start = SENT_AT_ONCE; start < rows.results.length; start += SENT_AT_ONCE) {
        const before = rows.results.slice(start - SENT_AT_ONCE, start).map((row) => row.first_started_at);
        const after = rows.results.slice(start, start + SENT_AT_ONCE).map((row) => row.first_started_at);
        expect(Math.min(...after)).toBeGreaterThanOrEqual(Math.max(...before));
      }

      // In the log with its replay's id, not in the feed (which lists the originals).
      const log = await call("GET", `/v1/webhooks/${subscription.id}/deliveries/?page_size=1`, { headers: client.headers });
      expect(log.json.results[0].replay_id).toBe(replayId);
      expect(log.json.results[0].lag_ms).toBeNull();
      // Listed newest first.
      const again = await call("POST", path, { body: { since, until, dry_run: false }, headers: client.headers });
      expect(again.status).toBe(202);
      expect((await call("DELETE", `/v1/webhooks/${subscription.id}/replays/${again.json.id}/`, { headers: client.headers })).json.status).toBe("canceled");
      const listed = await call("GET", `/v1/webhooks/${subscription.id}/replays/`, { headers: client.headers });
      expect(listed.json.results.map((r: { id: string }) => r.id)).toEqual([again.json.id, replayId]);
    },
    WAIT_MS + 180_000,
  );

  it("refuses a reversed, too long or future window, 51 payments, another account's subscription and a paused one, with a clear 4xx", async () => {
    const { client } = await makeTenant({ shard: "B" });
    const other = await makeTenant({ shard: "B" });
    const { subscription } = await subscribeToReceiver(client);
    const path = `/v1/webhooks/${subscription.id}/replay/`;
    const now = Date.now();
    const at = (ms: number) => new Date(ms).toISOString();
    const cases: [unknown, number, Record<string, unknown>][] = [
      [{ since: at(now - DAY), until: at(now - 2 * DAY) }, 400, { until: ["Ensure until is not before since."] }],
      [{ since: at(now - 401 * DAY) }, 400, { since: ["Ensure the window from since to until spans at most 400 days."] }],
      [{ since: at(now + DAY) }, 400, { since: ["Ensure since is not in the future."] }],
      [{ since: at(now - DAY), until: at(now + DAY) }, 400, { until: ["Ensure until is not in the future."] }],
      [
        { since: at(now - DAY), payment_id: Array.from({ length: 51 }, (_, i) => `pmt_${i}`) },
        400,
        { payment_id: ["Ensure this field has no more than 50 elements."] },
      ],
      [{ since: at(now - DAY), payment_id: ["pmt_ok", "not an id"] }, 400, { payment_id: ["Enter a valid payment id."] }],
      [{ since: "yesterday" }, 400, { since: ["Datetime has wrong format. Use ISO 8601, for example 2026-11-02T09:00:00Z."] }],
      [{}, 400, { since: ["This field is required."] }],
    ];
    for (const [body, status, fields] of cases) {
      const res = await call("POST", path, { body, headers: client.headers });
      expect([res.status, res.json], JSON.stringify(body)).toEqual([status, fields]);
    }
    expect((await call("POST", path, { body: { since: at(now - DAY), dry_run: true }, headers: other.client.headers })).status).toBe(404);
    expect((await call("GET", `/v1/webhooks/${subscription.id}/replays/`, { headers: other.client.headers })).status).toBe(404);
    expect((await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { is_active: false }, headers: client.headers })).status).toBe(200);
    expect((await call("POST", path, { body: { since: at(now - DAY) }, headers: client.headers })).status).toBe(409);
    expect((await call("GET", `/v1/webhooks/${subscription.id}/replays/rpl_none/`, { headers: client.headers })).status).toBe(404);
  });

  it("runs each step safely twice (a crash after its work, before its message was acked), and sends each original once", async () => {
    const { client } = await makeTenant({ shard: "B" });
    const { subscription, since, until, paymentId, agedFrom } = await windowOfDeliveries(client, "B", 450, 300);
    // Counted from the archive objects' counts, or by reading them: with a payment filter, or for a window that starts inside one.
    const count = async (body: Record<string, unknown>) =>
      (await call("POST", `/v1/webhooks/${subscription.id}/replay/`, { body: { ...body, dry_run: true }, headers: client.headers })).json.count;
    expect(await count({ since, until })).toBe(450);
    expect(await count({ since, until, payment_id: [paymentId] })).toBe(450);
    expect(await count({ since, until, payment_id: ["pmt_other"] })).toBe(0);
    expect(await count({ since: new Date(agedFrom + 151).toISOString(), until })).toBe(300);
    const db = createDb(env.SHARD_B!);
    const now = Date.now();
    await replayRow(
      "B",
      "rpl_twice",
      { accountId: client.accountId, subscriptionId: subscription.id },
      { since: Date.parse(since), until: Date.parse(until) },
      450,
      now,
    );
    const { queue, sent } = keptQueue();
    const shardQueue = { queue, shard: "B" };
    for (let step = 0; step < 200; step++) {
      const first = await continueReplay(db, env.ARCHIVE, shardQueue, "rpl_twice", now + step);
      await continueReplay(db, env.ARCHIVE, shardQueue, "rpl_twice", now + step);
      // What the queue would do meanwhile: each handed delivery's first attempt made and ended.
      await env.SHARD_B!.prepare("update webhook_deliveries set attempts = 1, first_ended = 1 where replay_id = 'rpl_twice' and attempts = 0").run();
      if (first.next === "none") break;
    }
    const replay = await env.SHARD_B!.prepare("select status, count, sent from webhook_replays where id = 'rpl_twice'").first();
    expect(replay).toEqual({ status: "done", count: 450, sent: 450 });
    const made = await env
      .SHARD_B!.prepare("select count(*) as n, count(distinct replay_of) as originals from webhook_deliveries where replay_id = 'rpl_twice'")
      .first<{ n: number; originals: number }>();
    expect(made).toEqual({ n: 450, originals: 450 });
    expect(sent.filter((message) => message.delivery_id).length).toBe(450);
    expect((await env.SHARD_B!.prepare("select count(*) as n from webhook_replay_items where replay_id = 'rpl_twice'").first())!.n).toBe(0);
  });

  it("stops when canceled: nothing more is sent, and what waited for its first attempt ends unattempted", async () => {
    const { client } = await makeTenant({ shard: "B" });
    const { subscription, since, until } = await windowOfDeliveries(client, "B", 450, 0);
    const now = Date.now();
    await replayRow(
      "B",
      "rpl_cancel",
      { accountId: client.accountId, subscriptionId: subscription.id },
      { since: Date.parse(since), until: Date.parse(until) },
      450,
      now,
    );
    const db = createDb(env.SHARD_B!);
    const { queue, sent } = keptQueue();
    // The log's copy, then the archive's (none), then the first hundred handed over.
    for (let step = 0; step < 4; step++) await continueReplay(db, env.ARCHIVE, { queue, shard: "B" }, "rpl_cancel", now);
    expect(sent.filter((message) => message.delivery_id)).toHaveLength(SENT_AT_ONCE);
    const canceled = await call("DELETE", `/v1/webhooks/${subscription.id}/replays/rpl_cancel/`, { headers: client.headers });
    expect(canceled.status).toBe(200);
    expect(canceled.json).toMatchObject({ id: "rpl_cancel", status: "canceled", sent: SENT_AT_ONCE });
    const ended = await env
      .SHARD_B!.prepare("select status, count(*) as n from webhook_deliveries where replay_id = 'rpl_cancel' group by status")
      .all<{ status: string; n: number }>();
    expect(ended.results).toEqual([{ status: "failed", n: SENT_AT_ONCE }]);
    // Its next steps send nothing, and clear what it had copied.
    expect(await continueReplay(db, env.ARCHIVE, { queue, shard: "B" }, "rpl_cancel", now)).toEqual({ next: "none" });
    expect(sent.filter((message) => message.delivery_id)).toHaveLength(SENT_AT_ONCE);
    expect((await env.SHARD_B!.prepare("select count(*) as n from webhook_replay_items where replay_id = 'rpl_cancel'").first())!.n).toBe(0);
    // Canceled again, it is answered as it is.
    expect((await call("DELETE", `/v1/webhooks/${subscription.id}/replays/rpl_cancel/`, { headers: client.headers })).json.status).toBe("canceled");
  });

  it("takes no sequence number: the feed lists the originals, not the replays", async () => {
    const { client } = await makeTenant({ shard: "A" });
    const { subscription, box } = await subscribeToReceiver(client);
    await makePayment(client);
    await waitFor(
      () => call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers }),
      (res) => res.json.count === 1 && res.json.results[0].status === "succeeded",
    );
    const started = await call("POST", `/v1/webhooks/${subscription.id}/replay/`, {
      body: { since: new Date(Date.now() - 3_600_000).toISOString() },
      headers: client.headers,
    });
    expect(started.status).toBe(202);
    const [again] = await waitFor(replayOf(box, started.json.id), (items) => items.length === 1);
    expect(again!.headers["hook-sequence"]).toBe("1");
    const feed = await call("GET", `/v1/webhooks/${subscription.id}/feed/?limit=10`, { headers: client.headers });
    expect(feed.json.results.map((item: { sequence: number }) => item.sequence)).toEqual([1]);
  });

  it("sends a step again for a replay whose step message was lost", async () => {
    const { client } = await makeTenant({ shard: "B" });
    const { subscription } = await subscribeToReceiver(client);
    const now = Date.now();
    await replayRow(
      "B",
      "rpl_lost",
      { accountId: client.accountId, subscriptionId: subscription.id },
      { since: 0, until: now - STALLED_MS - 1 },
      0,
      now - STALLED_MS - 1,
    );
    const { queue, sent } = keptQueue();
    expect(await resumeStalledReplays(createDb(env.SHARD_B!), { queue, shard: "B" }, now)).toBeGreaterThanOrEqual(1);
    expect(sent).toContainEqual({ replay_id: "rpl_lost", shard: "B" });
  });

  it("replays nothing of an erased account: its replays go with it, and the steps left send nothing", async () => {
    const { client, account } = await makeTenant({ shard: "B" });
    const { subscription, since, until } = await windowOfDeliveries(client, "B", 20, 10);
    const now = Date.now();
    await replayRow(
      "B",
      "rpl_erased",
      { accountId: client.accountId, subscriptionId: subscription.id },
      { since: Date.parse(since), until: Date.parse(until) },
      20,
      now,
    );
    expect((await call("DELETE", `/admin/accounts/${account.id}/`, { headers: ADMIN })).status).toBe(202);
    expect((await call("POST", `/v1/webhooks/${subscription.id}/replay/`, { body: { since, dry_run: true }, headers: client.headers })).status).toBe(401);
    const left = () => env.SHARD_B!.prepare("select count(*) as n from webhook_replays where account_id = ?1").bind(client.accountId).first<{ n: number }>();
    for (let run = 0; run < 10 && (await left())!.n > 0; run++) await continueErasures(createDb(env.DB), env);
    expect((await left())!.n).toBe(0);
    const { queue, sent } = keptQueue();
    expect(await continueReplay(createDb(env.SHARD_B!), env.ARCHIVE, { queue, shard: "B" }, "rpl_erased", Date.now())).toEqual({ next: "none" });
    expect(sent).toEqual([]);
    expect((await env.ARCHIVE!.list({ prefix: `deliveries/${client.accountId}/` })).objects).toEqual([]);
  });
});
