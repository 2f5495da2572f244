// The command line (packages/cli) from outside, against `npm start` in a fresh copy and the bundled
// receiver: listen stopped and restarted mid-burst forwards every delivery once; clear lines and
// exit codes on bad input; trigger; verify.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freePort, freshCopy, ROOT, run, startNpmStart } from "../../tools/lib/service.mjs";
import { startReceiver } from "../../tools/receiver/index.mjs";

const CLI = join(ROOT, "packages/cli");
const HOOK = { username: "hook-user", password: "hook-pass" };

describe("packages/cli against npm start", () => {
  let copy;
  let service;
  let receiver;
  let client;
  let processor;
  const scratch = mkdtempSync(join(tmpdir(), "payments-cli-"));

  before(async () => {
    copy = freshCopy();
    service = await startNpmStart(copy.dir, await freePort());
    receiver = await startReceiver({ quiet: true });
    client = { username: "demo-client", password: service.vars.DEMO_CLIENT_PASSWORD };
    processor = { username: "demo-processor", password: service.vars.DEMO_PROCESSOR_PASSWORD };
  });

  after(async () => {
    await receiver?.close();
    await service?.stop();
    copy?.remove();
    rmSync(scratch, { recursive: true, force: true });
  });

  const api = async (user, method, path, body) => {
    const res = await fetch(`${service.base}${path}`, {
      method,
      headers: { authorization: `Basic ${Buffer.from(`${user.username}:${user.password}`).toString("base64")}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: await res.json().catch(() => null) };
  };
  const env = (user, extra = {}) => ({
    ...process.env,
    PAYMENTS_API_URL: service.base,
    PAYMENTS_API_USERNAME: user.username,
    PAYMENTS_API_PASSWORD: user.password,
    ...extra,
  });
  const cli = (args, user = client, extra = {}) => run(process.execPath, [CLI, ...args], { env: env(user, extra) });

  /** A paused subscription: nothing is pushed, the feed has everything (a pull-only subscription). */
  async function pullOnly(fields = {}) {
    const res = await api(client, "POST", "/v1/webhooks/", {
      event: "payment.changed",
      url: "https://hooks.example.com/never",
      content_type: "application/json",
      ...HOOK,
      payment_status: true,
      is_active: false,
      ...fields,
    });
    assert.equal(res.status, 201, JSON.stringify(res.json));
    return res.json;
  }

  async function mailbox(subscription) {
    const path = `/cli/${subscription.id}`;
    receiver.configs.set(path, { secret: subscription.secret, publicKey: subscription.public_key ?? undefined, ...HOOK });
    return { url: `${receiver.url}${path}`, got: () => receiver.received.get(path) ?? [] };
  }

  function startListener(subscription, forwardTo) {
    const child = spawn(process.execPath, [CLI, "listen", "--subscription", subscription.id, "--forward-to", forwardTo, "--limit", "5"], {
      env: env(client),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const exited = new Promise((done) => child.once("exit", (code, signal) => done({ code, signal })));
    return { child, output: () => output, exited };
  }

  async function until(check, what, timeoutMs = 90_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  }

  async function payments(n) {
    for (let i = 0; i < n; i += 5) {
      await Promise.all(
        Array.from({ length: Math.min(5, n - i) }, async () => {
          const invoice = await api(client, "POST", "/v1/invoices/", {
            invoice_number: `CLI-${crypto.randomUUID()}`,
            buyer_id: "cpty_demoBuyerAcme00000001",
            supplier_id: "cpty_demoSupplierNorthwind1",
            amount_cents: 100,
          });
          const payment = await api(client, "POST", "/v2/payments/", {
            originating_counterparty_id: "cpty_demoBuyerAcme00000001",
            receiving_counterparty_id: "cpty_demoSupplierNorthwind1",
            invoice_ids: [invoice.json.id],
            payment_method: "ach",
          });
          assert.equal(payment.status, 201, JSON.stringify(payment.json));
        }),
      );
    }
  }

  it("forwards every delivery of a burst exactly once, verified, across a stop and a restart mid-burst", async () => {
    const subscription = await pullOnly({ signing: "ed25519" });
    const box = await mailbox(subscription);
    const N = 40;
    const first = startListener(subscription, box.url);
    const burst = payments(N);
    await until(() => box.got().length >= 8, "the first deliveries");
    first.child.kill("SIGTERM");
    const stopped = await first.exited;
    assert.equal(stopped.code, 0, first.output());
    assert.match(first.output(), /Stopped: \d+ forwarded this run/);
    const before = box.got().length;
    await burst;
    const second = startListener(subscription, box.url);
    try {
      await until(() => box.got().length >= N, `${N} deliveries (${box.got().length} so far)`);
    } finally {
      second.child.kill("SIGTERM");
      await second.exited;
    }
    // Counted once the listener has stopped: a duplicate could come from nowhere else.
    const got = box.got();
    const sequences = got.map((entry) => Number(entry.headers["hook-sequence"])).sort((a, b) => a - b);
    assert.deepEqual(
      sequences,
      Array.from({ length: N }, (_, i) => i + 1),
    );
    assert.ok(before < N, "the listener was stopped mid-burst");
    for (const entry of got) assert.deepEqual(entry.verified, { basic: true, hmac: true, standard: true, kit: true });
    assert.match(second.output(), /#\d+ payment\.changed pmt_[\w-]+ -> 200/);
    const feed = await api(client, "GET", `/v1/webhooks/${subscription.id}/feed/?after=acked`);
    assert.deepEqual(feed.json.results, [], "every delivery is acked");
  });

  it("listen --serve answers the ownership challenge itself and forwards the held deliveries, each once, to a target that never sees a challenge", async () => {
    const admin = { authorization: `Bearer ${service.vars.ADMIN_TOKEN}`, "content-type": "application/json" };
    const setting = (on) =>
      fetch(`${service.base}/admin/accounts/acct_demoAccount000000001/`, { method: "PATCH", headers: admin, body: JSON.stringify({ verify_endpoints: on }) });
    assert.equal((await setting(true)).status, 200);
    const port = await freePort();
    let listener;
    try {
      const made = await api(client, "POST", "/v1/webhooks/", {
        event: "payment.changed",
        url: `http://127.0.0.1:${port}/`,
        content_type: "application/json",
        signing: "ed25519",
        ...HOOK,
        payment_status: true,
      });
      assert.equal(made.status, 201, JSON.stringify(made.json));
      assert.equal(made.json.verification, "pending");
      const box = await mailbox(made.json);
      // The target would answer a challenge without its echo: only the listener can prove ownership.
      receiver.configs.set(new URL(box.url).pathname, { ...receiver.configs.get(new URL(box.url).pathname), echo: "none" });
      await payments(3);
      const args = [
        "listen",
        "--serve",
        String(port),
        "--subscription",
        made.json.id,
        "--forward-to",
        box.url,
        "--hook-username",
        HOOK.username,
        "--hook-password",
        HOOK.password,
      ];
      const child = spawn(process.execPath, [CLI, ...args], { env: env(client), stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout.on("data", (chunk) => (output += chunk));
      child.stderr.on("data", (chunk) => (output += chunk));
      listener = { child, output: () => output, exited: new Promise((done) => child.once("exit", (code) => done(code))) };
      await until(() => output.includes("Serving"), `the listener to start; it printed: ${output}`);
      assert.equal((await api(client, "POST", `/v1/webhooks/${made.json.id}/verify/`)).status, 202);
      await until(async () => (await api(client, "GET", `/v1/webhooks/${made.json.id}/`)).json.verification === "verified", "the subscription verified");
      await until(() => box.got().length >= 3, `3 deliveries (${box.got().length} so far)`);
      child.kill("SIGTERM");
      assert.equal(await listener.exited, 0, output);
      listener = null;
      const got = box.got();
      assert.deepEqual(
        got.map((entry) => Number(entry.headers["hook-sequence"])).sort((a, b) => a - b),
        [1, 2, 3],
      );
      for (const entry of got) {
        assert.equal(entry.headers["hook-event"], "payment.changed");
        assert.deepEqual(entry.verified, { basic: true, hmac: true, standard: true, kit: true });
      }
      assert.match(output, /Answered the service's ownership challenge/);
      assert.match(output, /#\d+ payment\.changed -> 200/);
      assert.match(output, /Stopped: 3 forwarded/);
    } finally {
      listener?.child.kill("SIGTERM");
      await listener?.exited;
      assert.equal((await setting(false)).status, 200);
    }
  });

  it("says what is wrong in one line and exits non-zero: a wrong subscription, wrong credentials, the service down", async () => {
    const wrongSubscription = await cli(["listen", "--subscription", crypto.randomUUID(), "--forward-to", "http://127.0.0.1:9/"]);
    assert.equal(wrongSubscription.code, 1);
    assert.match(wrongSubscription.stderr, /^No subscription [0-9a-f-]+ for this API user \(404\)/);
    assert.equal(wrongSubscription.stderr.trim().split("\n").length, 1);
    const wrongPassword = await cli(["listen", "--subscription", crypto.randomUUID(), "--forward-to", "http://127.0.0.1:9/"], { ...client, password: "wrong" });
    assert.equal(wrongPassword.code, 1);
    assert.match(wrongPassword.stderr, /refused the credentials of "demo-client" \(401\)/);
    const down = await cli(["listen", "--subscription", "x", "--forward-to", "http://127.0.0.1:9/"], client, {
      PAYMENTS_API_URL: `http://127.0.0.1:${await freePort()}`,
    });
    assert.equal(down.code, 1);
    assert.match(down.stderr, /Cannot reach the service at http:\/\/127\.0\.0\.1:\d+ \(connection refused/);
    const noCredentials = await run(process.execPath, [CLI, "trigger"], { env: { ...process.env, PAYMENTS_API_USERNAME: "", PAYMENTS_API_PASSWORD: "" } });
    assert.equal(noCredentials.code, 1);
    assert.match(noCredentials.stderr, /Set PAYMENTS_API_USERNAME and PAYMENTS_API_PASSWORD/);
    const help = await run(process.execPath, [CLI, "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /listen --subscription <id> --forward-to <url>/);
  });

  it("says when the local target is down, keeps the delivery, and forwards it once the target is up", async () => {
    const subscription = await pullOnly();
    const port = await freePort();
    const listener = startListener(subscription, `http://127.0.0.1:${port}/late`);
    try {
      await payments(1);
      await until(() => /Cannot deliver to http:\/\/127\.0\.0\.1:\d+\/late \(connection refused/.test(listener.output()), "the target-down line");
      const late = await startReceiver({ port, quiet: true });
      try {
        late.configs.set("/late", { secret: subscription.secret, ...HOOK });
        await until(() => (late.received.get("/late") ?? []).length === 1, "the delivery once the target is up");
        assert.deepEqual(late.received.get("/late")[0].verified, { basic: true, hmac: true, standard: true, kit: true });
      } finally {
        await late.close();
      }
    } finally {
      listener.child.kill("SIGTERM");
      await listener.exited;
    }
  });

  it("trigger walks a payment through its statuses (a delivery per step); verify checks a saved delivery", async () => {
    const subscription = await pullOnly();
    const walked = await cli(["trigger"], processor);
    assert.equal(walked.code, 0, walked.stderr);
    assert.match(walked.stdout, /Made pmt_[\w-]+ \(pending, version 1\)/);
    assert.match(walked.stdout, /-> settled \(version 3\)/);
    const asClient = await cli(["trigger"], client);
    assert.equal(asClient.code, 1);
    assert.match(asClient.stderr, /Only a processor records payment events/);

    const feed = await api(client, "GET", `/v1/webhooks/${subscription.id}/feed/?signed=true`);
    assert.deepEqual(
      feed.json.results.map((item) => JSON.parse(item.body).payment_status),
      ["pending", "in-progress", "settled"],
    );
    const saved = join(scratch, "delivery.json");
    writeFileSync(saved, JSON.stringify(feed.json.results.at(-1)));
    const good = await cli(["verify", saved, "--secret", subscription.secret, "--hook-username", HOOK.username, "--hook-password", HOOK.password]);
    assert.equal(good.code, 0, good.stdout + good.stderr);
    assert.match(good.stdout, /^OK: delivery [0-9a-f-]+ is genuine/);
    writeFileSync(saved, JSON.stringify({ ...feed.json.results.at(-1), body: feed.json.results.at(-1).body.replace("settled", "failed") }));
    const tampered = await cli(["verify", saved, "--secret", subscription.secret]);
    assert.equal(tampered.code, 1);
    assert.match(tampered.stdout, /^NOT VERIFIED \(signature_mismatch\)/);
    const missing = await cli(["verify", join(scratch, "nope.json"), "--secret", subscription.secret]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Cannot read .*nope\.json: no such file/);
  });

  it("npm run receiver -- --subscription <id> reads the subscription's secret and credentials through the API and verifies its deliveries", async () => {
    const port = await freePort();
    const made = await api(client, "POST", "/v1/webhooks/", {
      event: "payment.changed",
      url: `http://127.0.0.1:${port}/hooks`,
      content_type: "application/json",
      ...HOOK,
      payment_status: true,
    });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    const receiverProcess = spawn(process.execPath, [join(ROOT, "tools/receiver/index.mjs"), "--subscription", made.json.id], {
      cwd: scratch,
      env: env(client, { RECEIVER_PORT: String(port) }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let printed = "";
    receiverProcess.stdout.on("data", (chunk) => (printed += chunk));
    receiverProcess.stderr.on("data", (chunk) => (printed += chunk));
    try {
      await until(() => printed.includes("Receiving webhooks at"), `the receiver to start; it printed: ${printed}`);
      assert.match(printed, new RegExp(`Verifying against subscription ${made.json.id}`));
      const event = await api(processor, "POST", "/v2/payments/pmt_demoPaymentInProgress1/events/", {
        event_code: "PU15",
        description: "Trace received",
        instrument_number: "TRACE-R",
      });
      assert.equal(event.status, 201);
      await until(
        () => /payment\.changed delivery \S+ -> 200 \(basic ok, hmac ok, standard ok, kit ok\)/.test(printed),
        `a verified delivery; the receiver printed: ${printed}`,
      );
    } finally {
      receiverProcess.kill();
    }
    // An unknown subscription: one line, exit 1.
    const unknown = await run(process.execPath, [join(ROOT, "tools/receiver/index.mjs"), "--subscription", "00000000-0000-4000-8000-000000000000"], {
      cwd: scratch,
      env: env(client, { RECEIVER_PORT: String(await freePort()) }),
    });
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /^npm run receiver: cannot read subscription 00000000-0000-4000-8000-000000000000: GET \/v1\/webhooks\/00000000-0000-4000-8000-000000000000\/ as demo-client answered 404/,
    );
  });
});
