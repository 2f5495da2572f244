// `listen` when a feed read is lost (the laptop slept with the long poll open, the network changed):
// the read is given up after its time, read again, and nothing is skipped or forwarded twice.
// A stand-in service on 127.0.0.1 plays the API's part.
import assert from "node:assert/strict";
import { test } from "node:test";
import { json, standIn } from "./stand-in.mjs";
import { serviceClient } from "../../packages/cli/api.js";
import { listen } from "../../packages/cli/commands/listen.js";

test("a feed read that never answers is read again; the delivery is forwarded once and acked", async () => {
  const item = {
    sequence: 1,
    delivery_id: "d-1",
    payment_id: "pmt_1",
    status: "held",
    created: "2026-11-25T00:00:00.000Z",
    body: '{"object_id":"pmt_1"}',
    cursor: "c-1",
    headers: { "content-type": "application/json", "hook-event": "payment.changed", "webhook-id": "d-1" },
  };
  const feedReads = [];
  const acks = [];
  const ackKeys = [];
  let acked = null;
  const service = await standIn((req, res, body) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/v1/webhooks/sub/") return json(res, 200, { id: "sub", url: "https://hooks.example.com/x" });
    if (url.pathname === "/v1/webhooks/sub/feed/") {
      feedReads.push(url.searchParams.get("after"));
      if (feedReads.length === 1) return; // lost: the answer never comes
      return json(res, 200, acked ? { results: [], next: acked } : { results: [item], next: item.cursor });
    }
    if (url.pathname === "/v1/webhooks/sub/feed/ack/") {
      acked = JSON.parse(body).cursor;
      acks.push(acked);
      ackKeys.push(req.headers["idempotency-key"]);
      return json(res, 200, { cursor: acked });
    }
    json(res, 404, { detail: "Not found." });
  });
  const forwarded = [];
  const target = await standIn((req, res, body) => {
    forwarded.push({ headers: req.headers, body });
    res.writeHead(200).end("ok");
  });
  const stop = new AbortController();
  const lines = [];
  const out = { isTTY: false, write: (text) => lines.push(text) };
  try {
    const running = listen(serviceClient({ url: service.url, username: "u", password: "p" }), {
      subscription: "sub",
      forwardTo: `${target.url}/hooks`,
      out,
      signal: stop.signal,
      feedTimeoutMs: 300,
    });
    // Stopped once it has read the feed twice after its ack: the second read comes only after the
    // first one's page was handled, so a second forward would have come by then.
    const readsAtAck = async () => {
      for (const deadline = Date.now() + 90_000; acks.length === 0;) {
        if (Date.now() > deadline) assert.fail("no ack in 90 s");
        await new Promise((done) => setTimeout(done, 50));
      }
      return feedReads.length;
    };
    const atAck = await readsAtAck();
    for (const deadline = Date.now() + 90_000; feedReads.length <= atAck + 1;) {
      if (Date.now() > deadline) assert.fail("no two feed reads after the ack in 90 s");
      await new Promise((done) => setTimeout(done, 50));
    }
    stop.abort();
    assert.equal(await running, 1);
    assert.match(lines.join(""), /did not answer GET \/v1\/webhooks\/sub\/feed\/ in 0\.3 s \(asleep, or the network changed\)\. Trying again in 1 s\./);
    assert.equal(forwarded.length, 1);
    assert.equal(forwarded[0].body, item.body);
    assert.equal(forwarded[0].headers["webhook-id"], "d-1");
    assert.deepEqual(acks, ["c-1"]);
    assert.deepEqual(ackKeys, [undefined], "an ack is safe to repeat: it stores no idempotency key");
    assert.ok(feedReads.length >= 2 && feedReads.every((after) => after === "acked"));
  } finally {
    await service.close();
    await target.close();
  }
});

test("an ed25519 subscription's deliveries are checked with its published keys: a good one is forwarded, a changed one stops the listener", async () => {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const jwk = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const signedItem = async (sequence, body, sentBody = body) => {
    const id = `d-${sequence}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = Buffer.from(await crypto.subtle.sign("Ed25519", pair.privateKey, new TextEncoder().encode(`${id}.${timestamp}.${body}`))).toString(
      "base64",
    );
    return {
      sequence,
      delivery_id: id,
      body: sentBody,
      cursor: `c-${sequence}`,
      headers: {
        "content-type": "application/json",
        "hook-event": "payment.changed",
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": `v1a,${signature}`,
        "webhook-key-id": "k1",
      },
    };
  };
  const items = [await signedItem(1, '{"object_id":"pmt_1"}'), await signedItem(2, '{"object_id":"pmt_2"}', '{"object_id":"pmt_X"}')];
  let keySetReads = 0;
  let acked = null;
  const service = await standIn((req, res, body) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/v1/webhooks/sub/") return json(res, 200, { id: "sub", url: "https://hooks.example.com/x", signing: "ed25519" });
    if (url.pathname === "/v1/webhooks/sub/jwks/") {
      keySetReads += 1;
      return json(res, 200, { keys: [{ kty: "OKP", crv: "Ed25519", x: jwk.x, kid: "k1", use: "sig", alg: "EdDSA" }] });
    }
    if (url.pathname === "/v1/webhooks/sub/feed/") {
      const after = items.findIndex((item) => item.cursor === acked) + 1;
      return json(res, 200, { results: items.slice(after), next: items.at(-1).cursor });
    }
    if (url.pathname === "/v1/webhooks/sub/feed/ack/") return json(res, 200, { cursor: (acked = JSON.parse(body).cursor) });
    json(res, 404, { detail: "Not found." });
  });
  const forwarded = [];
  const target = await standIn((req, res, body) => {
    forwarded.push(body);
    res.writeHead(200).end("ok");
  });
  const lines = [];
  try {
    await assert.rejects(
      listen(serviceClient({ url: service.url, username: "u", password: "p" }), {
        subscription: "sub",
        forwardTo: `${target.url}/hooks`,
        out: { isTTY: false, write: (text) => lines.push(text) },
      }),
      /Delivery #2 \(d-2\) does not verify with the published keys/,
    );
    assert.deepEqual(forwarded, ['{"object_id":"pmt_1"}']);
    assert.equal(acked, "c-1");
    assert.equal(keySetReads, 1);
    assert.match(lines.join(""), /each checked with the keys at http:\/\/127\.0\.0\.1:\d+\/v1\/webhooks\/sub\/jwks\//);
  } finally {
    await service.close();
    await target.close();
  }
});
