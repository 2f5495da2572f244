import { describe, expect, it } from "vitest";
import { encodeFeedCursor } from "../../src/webhooks/subscriptions/feed";
import { call, makePayment, makeTenant, type User } from "../helpers/api";
import { receivedAt, subscribeToReceiver, waitFor } from "../helpers/webhooks";
import { ageForRetention, feedFromStart, logOf, runRetention } from "../helpers/feed";

// The feed (docs/interface.md, "The feed").
type Item = { sequence: number; delivery_id: string; payment_id: string; status: string; created: string; body: string };
const feed = async (user: User, id: string, query = ""): Promise<{ status: number; json: { results: Item[]; next: string } & Record<string, unknown> }> =>
  call("GET", `/v1/webhooks/${id}/feed/${query}`, { headers: user.headers });
const ack = (user: User, id: string, cursor: string) => call("POST", `/v1/webhooks/${id}/feed/ack/`, { body: { cursor }, headers: user.headers });

describe("the feed", () => {
  it("lists a subscription's deliveries in sequence order after a cursor, each body the bytes sent, then nothing new", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client, { all_payment_details: true });
    for (let i = 0; i < 5; i++) await makePayment(client);
    await call("POST", `/v1/webhooks/${subscription.id}/test/`, { headers: client.headers });
    const received = await waitFor(
      () => receivedAt(box),
      (list) => list.length === 6,
    );
    const first = await feed(client, subscription.id, "?limit=3");
    expect(first.status).toBe(200);
    expect(first.json.results.map((item) => item.sequence)).toEqual([1, 2, 3]);
    const second = await feed(client, subscription.id, `?after=${first.json.next}&limit=3`);
    expect(second.json.results.map((item) => item.sequence)).toEqual([4, 5]); // the test delivery has no sequence
    const sentBody = new Map(received.map((got) => [got.headers["hook-delivery"], got.body]));
    for (const item of [...first.json.results, ...second.json.results]) {
      expect(item.body).toBe(sentBody.get(item.delivery_id));
      expect(item.status).toBe("succeeded");
    }
    const third = await feed(client, subscription.id, `?after=${second.json.next}`);
    expect(third.json.results).toEqual([]);
    expect(third.json.next).toBe(second.json.next);
  });

  it("waits for the next delivery when asked to", async () => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    const empty = await feed(client, subscription.id);
    expect(empty.json.results).toEqual([]);
    const [waited] = await Promise.all([
      feed(client, subscription.id, `?after=${empty.json.next}&wait=20`),
      new Promise((resolve) => setTimeout(resolve, 300)).then(() => makePayment(client)),
    ]);
    expect(waited.json.results.map((item) => item.sequence)).toEqual([1]);
  });

  it("keeps an acknowledged position, only ever forward, and reads on from it", async () => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    for (let i = 0; i < 3; i++) await makePayment(client);
    const one = await feed(client, subscription.id, "?limit=1");
    const two = await feed(client, subscription.id, `?after=${one.json.next}&limit=1`);
    expect((await feed(client, subscription.id, "?after=acked")).json.results.map((item) => item.sequence)).toEqual([1, 2, 3]);
    expect((await ack(client, subscription.id, two.json.next)).json).toEqual({ cursor: two.json.next });
    expect((await ack(client, subscription.id, one.json.next)).json).toEqual({ cursor: two.json.next });
    expect((await feed(client, subscription.id, "?after=acked")).json.results.map((item) => item.sequence)).toEqual([3]);
  });

  it("is a pull-only subscription when the subscription is paused: nothing is pushed, the feed has everything", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client, { payment_status: true });
    await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { is_active: false }, headers: client.headers });
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await makePayment(client)).payment);
    const page = await feed(client, subscription.id);
    expect(page.json.results.map((item) => [item.sequence, item.payment_id, item.status])).toEqual(made.map((p, i) => [i + 1, p.id, "held"]));
    expect(JSON.parse(page.json.results[0]!.body)).toEqual({
      object_type: "payment",
      object_id: made[0].id,
      event: "payment.changed",
      payment_status: "pending",
    });
    expect(await receivedAt(box)).toEqual([]);
  });

  it.each([
    ["a cursor that is not one", "?after=not-a-cursor", 400, { after: ["Not a cursor of this feed."] }],
    ["a limit of 0", "?limit=0", 400, { limit: ["Ensure this value is greater than or equal to 1."] }],
    ["a limit over 1000", "?limit=1001", 400, { limit: ["Ensure this value is less than or equal to 1000."] }],
    ["a limit that is no number", "?limit=ten", 400, { limit: ["A valid integer is required."] }],
    ["a wait over 20", "?wait=21", 400, { wait: ["Ensure this value is less than or equal to 20."] }],
  ])("answers %s with %i", async (_name, query, status, body) => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    const res = await feed(client, subscription.id, query);
    expect(res.status).toBe(status);
    expect(res.json).toEqual(body);
  });

  it("refuses a cursor of another subscription (400), of another epoch or past what was removed (410), and another account's feed (404)", async () => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    const { subscription: other } = await subscribeToReceiver(client);
    await makePayment(client);
    const page = await feed(client, subscription.id);
    const foreign = await feed(client, other.id, `?after=${page.json.next}`);
    expect(foreign.status).toBe(400);
    expect(foreign.json).toEqual({ after: ["This cursor belongs to another subscription's feed."] });
    const otherEpoch = encodeFeedCursor({ subscriptionId: subscription.id, epoch: "restored", sequence: 1, created: 0 });
    const expired = { detail: "Cursor expired; resynchronise by polling /v2/payments/." };
    expect(await feed(client, subscription.id, `?after=${otherEpoch}`)).toMatchObject({ status: 410, json: expired });
    // Retention removed a delivery after the cursor: what it would read next is gone.
    await makePayment(client);
    await waitFor(
      () => logOf(client, subscription.id),
      (rows) => rows.length === 2 && rows.every((row) => row.status === "succeeded"),
    );
    await ageForRetention(client, subscription.id, 2);
    const start = await feed(client, subscription.id, "?limit=1");
    await runRetention(client, subscription.id, 2);
    expect(await feed(client, subscription.id, `?after=${start.json.next}`)).toMatchObject({ status: 410, json: expired });
    expect(await ack(client, subscription.id, start.json.next)).toMatchObject({ status: 410, json: expired });
    const stranger = await makeTenant();
    expect((await feed(stranger.client, subscription.id)).status).toBe(404);
  });

  it("refuses to keep the word acked, or a cursor edited past what the feed handed out (400), and keeps the position it had", async () => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    for (let i = 0; i < 3; i++) await makePayment(client);
    const page = await feed(client, subscription.id, "?limit=2");
    expect((await ack(client, subscription.id, page.json.next)).status).toBe(200);
    const word = await ack(client, subscription.id, "acked");
    expect(word).toMatchObject({ status: 400, json: { cursor: ['"acked" is not a cursor: send a cursor the feed handed out.'] } });
    expect((await feed(client, subscription.id, "?after=acked")).json.results.map((item) => item.sequence)).toEqual([3]);
    const handed = JSON.parse(atob(page.json.next.replace(/-/g, "+").replace(/_/g, "/"))) as { s: string; e: string; q: number; c: number };
    const edited = (change: Partial<typeof handed>) =>
      encodeFeedCursor({ subscriptionId: handed.s, epoch: handed.e, sequence: handed.q, created: handed.c, ...renamed(change) });
    const renamed = ({ q, c }: Partial<typeof handed>) => ({ ...(q === undefined ? {} : { sequence: q }), ...(c === undefined ? {} : { created: c }) });
    const past = { after: ["This cursor points past what the feed has handed out."] };
    for (const cursor of [edited({ c: handed.c + 365 * 86_400_000 }), edited({ q: 4 }), edited({ q: 1, c: handed.c + 365 * 86_400_000 })]) {
      expect(await feed(client, subscription.id, `?after=${cursor}`)).toMatchObject({ status: 400, json: past });
      expect(await ack(client, subscription.id, cursor)).toMatchObject({ status: 400, json: { cursor: past.after } });
    }
    // Its stamp a little later, where it would skip the third: refused too.
    const third = await feed(client, subscription.id, `?after=${page.json.next}`);
    const thirdAt = new Date(third.json.results[0]!.created).getTime();
    expect((await feed(client, subscription.id, `?after=${edited({ c: thirdAt })}`)).status).toBe(400);
    expect((await feed(client, subscription.id, "?after=acked")).json.results.map((item) => item.sequence)).toEqual([3]);
  });

  it("settles held deliveries up to the acked position: a pull-only reader's resume pushes only what it did not ack", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client, { payment_status: true });
    await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { is_active: false }, headers: client.headers });
    for (let i = 0; i < 5; i++) await makePayment(client);
    const read = await feed(client, subscription.id, "?limit=3");
    expect((await ack(client, subscription.id, read.json.next)).status).toBe(200);
    expect(await receivedAt(box)).toEqual([]);
    await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { is_active: true }, headers: client.headers });
    const pushed = await waitFor(
      () => receivedAt(box),
      (list) => list.length === 2,
    );
    expect(pushed.map((got) => got.headers["hook-sequence"]).sort()).toEqual(["4", "5"]);
    const rows = await waitFor(
      () => logOf(client, subscription.id),
      (list) => list.every((row) => row.status === "succeeded"),
    );
    expect(rows.map((row) => row.sequence)).toEqual([1, 2, 3, 4, 5]);
    const settled = await call("GET", `/v1/webhooks/${subscription.id}/deliveries/${rows[0]!.id}/`, { headers: client.headers });
    expect(settled.json).toMatchObject({ status: "succeeded", attempts: [], next_attempt_at: null });
    expect((await call("GET", `/v1/webhooks/${subscription.id}/deliveries/?status=held`, { headers: client.headers })).json.count).toBe(0);
  });

  it("reads on page by page after retention removed the oldest: from the start, and from a cursor at what was removed", async () => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    for (let i = 0; i < 6; i++) await makePayment(client);
    await waitFor(
      () => logOf(client, subscription.id),
      (rows) => rows.length === 6 && rows.every((row) => row.status === "succeeded"),
    );
    await ageForRetention(client, subscription.id, 3);
    const atThree = await feed(client, subscription.id, "?limit=3");
    await runRetention(client, subscription.id, 3);
    for (const limit of [1, 4]) expect((await feedFromStart(client, subscription.id, limit)).map((item) => item.sequence)).toEqual([4, 5, 6]);
    expect((await feed(client, subscription.id, `?after=${atThree.json.next}`)).json.results.map((item) => item.sequence)).toEqual([4, 5, 6]);
    await makePayment(client);
    expect((await feedFromStart(client, subscription.id, 2)).map((item) => item.sequence)).toEqual([4, 5, 6, 7]);
  });
});
