// `listen --serve` from the service's side: what it answers a push, a challenge, a forged or
// oversized request, and what reaches the local target. A stand-in service on 127.0.0.1 plays the
// API's part; the pushes are signed here with the subscription's secret.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { json, standIn } from "./stand-in.mjs";
import { Webhook } from "standardwebhooks";
import { CliError, serviceClient } from "../../packages/cli/api.js";
import { deliveryHeaders, MAX_BODY_BYTES, serve } from "../../packages/cli/commands/serve.js";

const SECRET = `whsec_${Buffer.from("a-test-secret-of-32-bytes-length").toString("base64")}`;

/** The headers the service pushes `body` with, signed with SECRET. */
function signed(body, { id = crypto.randomUUID(), event = "payment.changed", sequence = "1" } = {}) {
  const at = new Date();
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(SECRET).sign(id, at, body),
    "hook-hmac": createHmac("sha256", Buffer.from(SECRET.slice(6), "base64"))
      .update(body)
      .digest("base64"),
    "hook-event": event,
    "hook-sequence": sequence,
  };
}

describe("listen --serve", () => {
  let service;
  let target;
  let targetStatus = 200;
  const forwarded = [];
  const stop = new AbortController();
  const lines = [];
  let running;
  let base;

  before(async () => {
    service = await standIn((req, res) =>
      req.url === "/v1/webhooks/sub/" ? json(res, 200, { id: "sub", url: "http://127.0.0.1:1/", signing: "hmac" }) : json(res, 404, { detail: "Not found." }),
    );
    target = await standIn((req, res, body) => {
      forwarded.push({ headers: req.headers, body });
      res.writeHead(targetStatus).end("ok");
    });
    const out = { isTTY: false, write: (text) => lines.push(text) };
    running = serve(serviceClient({ url: service.url, username: "u", password: "p" }), {
      subscription: "sub",
      forwardTo: `${target.url}/hooks`,
      port: 0,
      secrets: [SECRET],
      out,
      signal: stop.signal,
    });
    for (const deadline = Date.now() + 30_000; !lines.join("").includes("Serving");) {
      if (Date.now() > deadline) assert.fail(`not serving in 30 s: ${lines.join("")}`);
      await new Promise((done) => setTimeout(done, 20));
    }
    base = lines.join("").match(/at (http:\/\/127\.0\.0\.1:\d+\/)/)[1];
  });

  after(async () => {
    stop.abort();
    await running;
    await service.close();
    await target.close();
  });

  const push = (body, headers) => fetch(base, { method: "POST", headers, body });

  it("answers a signed challenge itself, with its echo, and forwards nothing", async () => {
    const body = JSON.stringify({ type: "webhook.verification", challenge: "c-123" });
    const before = forwarded.length;
    const res = await push(body, signed(body, { event: "webhook.verification" }));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { challenge: "c-123" });
    assert.equal(forwarded.length, before);
  });

  it("forwards a signed delivery with its body and headers, and answers the target's 2xx", async () => {
    const body = JSON.stringify({ object_id: "pmt_1" });
    const headers = signed(body, { id: "d-7", sequence: "7" });
    const res = await push(body, headers);
    assert.equal(res.status, 200);
    const got = forwarded.at(-1);
    assert.equal(got.body, body);
    assert.equal(got.headers["webhook-id"], "d-7");
    assert.equal(got.headers["webhook-signature"], headers["webhook-signature"]);
    assert.match(lines.join(""), /#7 payment\.changed -> 200/);
  });

  it("answers 502, never the target's own refusal (a 410 would disable the subscription), when the target refuses", async () => {
    targetStatus = 410;
    try {
      const body = JSON.stringify({ object_id: "pmt_2" });
      const res = await push(body, signed(body));
      assert.equal(res.status, 502);
      assert.deepEqual(await res.json(), { forwarded_status: 410 });
    } finally {
      targetStatus = 200;
    }
  });

  it("refuses what does not verify (a forged challenge included), what is too large, and what is not a POST", async () => {
    const before = forwarded.length;
    const body = JSON.stringify({ type: "webhook.verification", challenge: "forged" });
    const forged = await push(body, { ...signed(body, { event: "webhook.verification" }), "webhook-signature": "v1,AAAA" });
    assert.equal(forged.status, 401);
    assert.doesNotMatch(await forged.text(), /forged/);
    const big = await push("x".repeat(MAX_BODY_BYTES + 1), signed("{}")).catch((error) => error);
    // The connection is cut once the limit is passed: the sender sees the 413, or the cut while it still writes.
    if (!(big instanceof Error)) assert.equal(big.status, 413);
    assert.match(lines.join(""), new RegExp(`A delivery over ${MAX_BODY_BYTES} bytes was refused \\(413\\)`));
    assert.equal((await fetch(base)).status, 405);
    assert.equal(forwarded.length, before);
  });
});

describe("listen --serve, refused before it starts", () => {
  it("needs the secret of an hmac subscription", async () => {
    const service = await standIn((req, res) => json(res, 200, { id: "sub", url: "https://x.example/", signing: "hmac" }));
    try {
      const started = serve(serviceClient({ url: service.url, username: "u", password: "p" }), {
        subscription: "sub",
        forwardTo: "http://127.0.0.1:9/",
        port: 0,
        out: { write() {} },
      });
      await assert.rejects(started, (error) => error instanceof CliError && /pass --secret whsec_/.test(error.message));
    } finally {
      await service.close();
    }
  });

  it("keeps a delivery's own headers and drops the hop's", () => {
    assert.deepEqual(deliveryHeaders({ host: "h", "content-length": "3", connection: "close", "webhook-id": "d", "x-many": ["a", "b"] }), {
      "webhook-id": "d",
      "x-many": "a, b",
    });
  });
});
