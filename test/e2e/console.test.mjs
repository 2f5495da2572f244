// The console at /console/, as its users drive it: in Debian's Chromium (playwright-core), against
// `npm start` in a fresh copy, with a real receiver on 127.0.0.1. Screenshots go to
// artifacts/screenshots (CI keeps them).
import assert from "node:assert/strict";
import { launchBrowser, noBrowser, openPage } from "./browser.mjs";
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Webhook } from "standardwebhooks";
import { challengeAnswer, verify } from "../../packages/verify/index.js";
import { freePort, freshCopy, ROOT, startNpmStart as startService } from "../../tools/lib/service.mjs";

const SHOTS = join(ROOT, "artifacts", "screenshots");

/**
 * A receiver that answers `mode.status` (after `mode.delayMs`) and keeps what it got; with
 * `mode.echo`, it answers an endpoint-ownership challenge as the kit does.
 */
async function startReceiver() {
  const got = [];
  const mode = { status: 200, echo: false, delayMs: 0 };
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", async () => {
      got.push({ headers: request.headers, body });
      if (mode.delayMs > 0) await new Promise((done) => setTimeout(done, mode.delayMs));
      const answer = mode.echo && mode.status === 200 ? challengeAnswer({ body, headers: request.headers }) : null;
      if (answer) return response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      response.writeHead(mode.status, { "content-type": "text/plain" }).end(mode.status === 200 ? "ok" : "gone");
    });
  });
  const port = await freePort();
  await new Promise((done) => server.listen(port, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${port}/hooks`, got, mode, stop: () => new Promise((done) => server.close(done)) };
}

const shot = (page, name) => page.screenshot({ path: join(SHOTS, `console-${name}.png`), fullPage: true });

async function until(read, done, what, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("the console", { skip: noBrowser }, () => {
  let copy;
  let service;
  let receiver;
  let browser;

  before(async () => {
    copy = freshCopy();
    service = await startService(copy.dir, await freePort());
    receiver = await startReceiver();
    browser = await launchBrowser();
    mkdirSync(SHOTS, { recursive: true });
  });

  /** A page of the console, signed in as demo-client, on its webhooks list. */
  async function signedIn(options) {
    const page = await openPage(browser, options);
    await page.goto(`${service.base}/console/`);
    await page.getByLabel("Username").fill("demo-client");
    await page.getByLabel("Password").fill(service.vars.DEMO_CLIENT_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Webhooks" }).waitFor();
    return page;
  }

  after(async () => {
    await browser?.close();
    await receiver?.stop();
    await service?.stop();
    copy?.remove();
  });

  it("signs in, subscribes a receiver, sends a test delivery, watches a delivery fail, recovers it, and shows the payment's timeline", async () => {
    const page = await openPage(browser, { viewport: { width: 1280, height: 900 } });
    const elsewhere = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(service.base) && !request.url().startsWith("data:")) elsewhere.push(request.url());
    });

    // Sign in with the keyboard alone; a wrong password is told in the API's words.
    await page.goto(`${service.base}/console/`);
    await page.getByLabel("Username").focus();
    await page.keyboard.type("demo-client");
    await page.keyboard.press("Tab");
    await page.keyboard.type("not-the-password");
    await page.keyboard.press("Enter");
    await page.getByRole("alert").filter({ hasText: "Invalid username/password." }).waitFor();
    await page.getByLabel("Password").fill(service.vars.DEMO_CLIENT_PASSWORD);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Webhooks" }).waitFor();

    // A failed save keeps what was typed, and names the field.
    await page.getByRole("button", { name: "New subscription" }).click();
    await page.getByLabel("Description").fill("ERP sync (test)");
    await page.getByLabel("Endpoint URL").fill(receiver.url);
    await page.getByLabel("Receiver username").fill("demo-client");
    await page.getByLabel("Receiver password").fill("hook-pass-123");
    await page.getByLabel("Payment events").check();
    await page.getByRole("button", { name: "Create subscription" }).click();
    await page.getByText("Use credentials of your own choosing, not your API username.").first().waitFor();
    assert.equal(await page.getByLabel("Endpoint URL").inputValue(), receiver.url);
    assert.equal(await page.getByLabel("Payment events").isChecked(), true);
    await shot(page, "failed-save");
    await page.getByLabel("Receiver username").fill("hook-user");
    await page.getByRole("button", { name: "Create subscription" }).click();
    await page.getByRole("status").filter({ hasText: "Subscription created" }).waitFor();
    await page.getByRole("heading", { name: "ERP sync (test)" }).waitFor();
    const subscriptionId = new URL(page.url()).hash.split("/")[2];
    await page.getByRole("button", { name: "Show signing secret" }).click();
    const secret = (await page.locator(".secret code").first().textContent()).trim();
    assert.match(secret, /^whsec_/);
    await page.getByRole("button", { name: "Hide signing secret" }).click();

    // A test delivery arrives, signed: the standardwebhooks library verifies it with the secret shown.
    await page.getByRole("button", { name: "Send test delivery" }).click();
    const [test] = await until(
      () => receiver.got,
      (got) => got.length >= 1,
      "the test delivery",
    );
    const verified = new Webhook(secret).verify(test.body, test.headers);
    assert.equal(verified.test, true);
    assert.match(verified.object_id, /^pmt_/);
    await page.getByRole("button", { name: "Refresh" }).click();
    await page.locator("tbody .badge", { hasText: "succeeded" }).first().waitFor();
    await page.locator("tbody .badge", { hasText: "test" }).first().waitFor();
    // The lag chart draws the test delivery's lag once the page reads the stats again: a bar, and its figure in the label.
    await page.reload();
    const lag = page.getByRole("img", { name: /^p95 lag over the last 24h: highest p95 lag [\d,]+ ms$/ });
    await lag.waitFor();
    assert.equal(await page.locator("figure.chart.lag rect.bar.lag").count(), 1);
    await shot(page, "subscription");

    // The receiver answers 410: the next change's delivery fails (and pauses the subscription).
    receiver.mode.status = 410;
    const processor = { authorization: `Basic ${btoa(`demo-processor:${service.vars.DEMO_PROCESSOR_PASSWORD}`)}`, "content-type": "application/json" };
    const paymentId = "pmt_demoPaymentPending0001";
    const event = await fetch(`${service.base}/v2/payments/${paymentId}/events/`, {
      method: "POST",
      headers: processor,
      body: JSON.stringify({ event_code: "PU10", description: "Sent to the bank", status: "in-progress" }),
    });
    assert.equal(event.status, 201);
    const eventId = (await event.json()).id;
    await until(
      () => receiver.got,
      (got) => got.length >= 2,
      "the failing attempt",
    );
    await until(
      async () => {
        await page.getByRole("button", { name: "Refresh" }).click();
        return page.locator("tbody .badge", { hasText: "failed" }).count();
      },
      (n) => n >= 1,
      "the failed delivery in the log",
    );
    await page
      .locator("tbody tr", { has: page.locator(".badge", { hasText: "failed" }) })
      .first()
      .getByRole("link")
      .first()
      .click();
    await page.getByRole("heading", { name: "Delivery" }).waitFor();
    await shot(page, "failed-delivery");
    await page.locator(".timeline").getByText("HTTP 410").first().waitFor();
    await page.getByRole("heading", { name: "Headers sent" }).waitFor();
    await page.getByText("Basic ********").waitFor();
    await shot(page, "failed-delivery");

    // Back on the subscription: resume it, and recover the failures of the last day.
    receiver.mode.status = 200;
    await page.goto(`${service.base}/console/#/subscriptions/${subscriptionId}`);
    await page.getByRole("button", { name: "Resume" }).click();
    await page.getByRole("status").filter({ hasText: "Resumed." }).waitFor();
    await page.getByRole("button", { name: "Recover", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "1 delivery recovered and queued." }).waitFor();
    const resent = await until(
      () => receiver.got,
      (got) => got.length >= 3,
      "the recovered delivery",
    );
    assert.equal(resent[2].headers["webhook-id"], resent[1].headers["webhook-id"]);
    assert.equal(resent[2].body, resent[1].body);
    await until(
      async () => {
        await page.getByRole("button", { name: "Refresh" }).click();
        return page.locator("tbody .badge", { hasText: "failed" }).count();
      },
      (n) => n === 0,
      "the recovered delivery to succeed",
    );
    await page.getByRole("heading", { name: "Health" }).waitFor();
    await page.locator(".stat-value").first().waitFor();
    await shot(page, "recovered");

    // The payment's timeline: its events, and the deliveries each change made.
    await page.getByRole("link", { name: "Payments", exact: true }).click();
    await page.getByRole("heading", { name: "Payments" }).waitFor();
    await page.getByRole("link", { name: paymentId }).click();
    await page.getByRole("heading", { name: "Timeline" }).waitFor();
    const step = page.locator(".timeline > li", { hasText: "Sent to the bank" });
    await step.locator(".made .badge", { hasText: "succeeded" }).waitFor();
    assert.equal(await step.locator(".made a").count(), 1);
    assert.ok(eventId.startsWith("pev_"));
    await shot(page, "payment-timeline");

    // Edit, rotate the secret, then delete the subscription.
    await page.goto(`${service.base}/console/#/subscriptions/${subscriptionId}`);
    await page.getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("Invoice ids").check();
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    await page.getByText("Payment status, Payment events, Invoice ids").waitFor();
    page.once("dialog", (dialog) => dialog.accept());
    await page.getByRole("button", { name: "Rotate secret" }).click();
    await page.getByRole("status").filter({ hasText: "Secret rotated." }).waitFor();
    await page.getByRole("button", { name: "Show signing secret" }).click();
    const rotated = await until(
      async () => (await page.locator(".secret code").first().textContent()).trim(),
      (text) => text !== secret,
      "the new secret",
    );
    assert.match(rotated, /^whsec_/);
    page.once("dialog", (dialog) => dialog.accept());
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("heading", { name: "Webhooks" }).waitFor();
    await page.getByText("No subscriptions yet.").waitFor();

    assert.deepEqual(elsewhere, [], "the console asked another origin for something");
    await page.close();
  });

  it("finds things by id, names counterparties, has counterparty and invoice pages, decodes form bodies and names the time zone", async () => {
    const client = { authorization: `Basic ${btoa(`demo-client:${service.vars.DEMO_CLIENT_PASSWORD}`)}`, "content-type": "application/json" };
    const made = await fetch(`${service.base}/v1/webhooks/`, {
      method: "POST",
      headers: client,
      body: JSON.stringify({
        event: "payment.changed",
        url: receiver.url,
        content_type: "application/x-www-form-urlencoded",
        username: "hook-user",
        password: "hook-pass-123",
        invoice_ids: true,
        payment_events: true,
      }),
    });
    const subscriptionId = (await made.json()).id;
    const test = await (await fetch(`${service.base}/v1/webhooks/${subscriptionId}/test/`, { method: "POST", headers: client })).json();
    const page = await signedIn({ viewport: { width: 1280, height: 900 }, timezoneId: "Asia/Tokyo" });
    const search = async (id) => {
      await page.getByRole("searchbox", { name: "Search" }).fill(id);
      await page.keyboard.press("Enter");
    };

    // A delivery by its id alone: its form body field by field, and its times in the browser's zone, named.
    await search(test.id);
    await page.getByRole("heading", { name: "Delivery" }).waitFor();
    await page.getByRole("heading", { name: "Body (form fields, decoded)" }).waitFor();
    const field = (name) => page.locator("#body ~ * tr, .card:has(#body) tr", { has: page.locator("th", { hasText: new RegExp(`^${name}$`) }) });
    assert.equal((await field("object_type").locator("td").textContent()).trim(), "payment");
    assert.ok((await field("invoice_ids").count()) >= 1, "invoice_ids as fields");
    assert.match(await field("payment_events").locator("td").textContent(), /"event_code"/);
    assert.match(await page.locator(".facts dd").nth(1).textContent(), /GMT\+9$/);
    await shot(page, "form-delivery");

    // A payment by id: its counterparties by name, each a link to its page; its invoices link to theirs.
    await search("pmt_demoPaymentPending0001");
    await page.getByRole("heading", { name: "Timeline" }).waitFor();
    await page.getByRole("link", { name: "Northwind Paper" }).click();
    await page.getByRole("heading", { name: "Northwind Paper" }).waitFor();
    await page.getByRole("heading", { name: "Payments to this supplier" }).waitFor();
    await page.getByRole("link", { name: "pmt_demoPaymentPending0001" }).waitFor();
    await page.goto(`${service.base}/console/#/payments/pmt_demoPaymentPending0001`);
    await page.getByRole("link", { name: "INV-1001" }).click();
    await page.getByRole("heading", { name: "Invoice INV-1001" }).waitFor();
    await page.getByRole("link", { name: "Acme Retail" }).waitFor();
    // The payment that covers it, with its status.
    await page.getByRole("link", { name: "pmt_demoPaymentPending0001" }).waitFor();
    await shot(page, "invoice");

    // The lists: payments name both sides; counterparties and invoices have their own.
    await page.getByRole("link", { name: "Payments", exact: true }).click();
    await page.waitForURL(/#\/payments$/);
    await page.locator("tbody tr", { hasText: "pmt_demoPaymentPending0001" }).getByRole("link", { name: "Acme Retail" }).waitFor();
    await page.getByRole("link", { name: "Counterparties", exact: true }).click();
    await page.getByRole("heading", { name: "Counterparties" }).waitFor();
    // Every counterparty first, so that the supplier's row leaving means the filtered answer is
    // shown: were the whole list still on its way, it could arrive after the filter was chosen.
    await page.locator("tbody tr").filter({ hasText: "Northwind Paper" }).waitFor();
    await page.getByLabel("Type").selectOption("buyer");
    await page.locator("tbody tr").filter({ hasText: "Northwind Paper" }).waitFor({ state: "detached" });
    await page.locator("tbody tr").filter({ hasText: "Acme Retail" }).waitFor();
    assert.deepEqual(await page.locator("tbody tr .badge").allTextContents(), ["buyer"]);
    await page.getByRole("link", { name: "Invoices", exact: true }).click();
    // Every invoice first (the list has loaded, so nothing redraws the form while it is typed in).
    await page.locator("tbody tr").filter({ hasText: "INV-1006" }).waitFor();
    await page.getByLabel("Invoice number").fill("INV-1005");
    await page.getByRole("button", { name: "Find" }).click();
    await page.waitForURL(/#\/invoices\?invoice_number=INV-1005$/);
    await until(
      () => page.locator("tbody tr").allTextContents(),
      (rows) => rows.length === 1 && rows[0].includes("INV-1005"),
      "only INV-1005",
    );

    // By an invoice number, and by a counterparty's name: one match goes to its page.
    await search("INV-1005");
    await page.getByRole("heading", { name: "Invoice INV-1005" }).waitFor();
    await search("northwind");
    await page.getByRole("heading", { name: "Northwind Paper" }).waitFor();
    await search("no such thing anywhere");
    await page.getByRole("alert").filter({ hasText: 'No invoice number, counterparty internal id or name matches "no such thing anywhere".' }).waitFor();

    // A subscription by id; an id that is nothing here says so.
    await search(subscriptionId);
    await page.getByRole("heading", { name: "Health" }).waitFor();
    await search("00000000-0000-4000-8000-000000000000");
    await page.getByRole("alert").filter({ hasText: "No subscription or delivery of this account has that id." }).waitFor();
    await page.close();
  });

  it("shows a paused subscription's held deliveries with their sequence numbers, its filters, and discards them; and a health subscription", async () => {
    const client = { authorization: `Basic ${btoa(`demo-client:${service.vars.DEMO_CLIENT_PASSWORD}`)}`, "content-type": "application/json" };
    const hook = (fields) =>
      fetch(`${service.base}/v1/webhooks/`, {
        method: "POST",
        headers: client,
        body: JSON.stringify({
          event: "payment.changed",
          url: receiver.url,
          content_type: "application/json",
          username: "hook-user",
          password: "hook-pass-123",
          ...fields,
        }),
      }).then((res) => res.json());
    const paused = await hook({ is_active: false, description: "paused with filters", filters: { status: ["in-progress", "settled"] } });
    const health = await hook({ event: "subscription.health", description: "health events" });
    const processor = { authorization: `Basic ${btoa(`demo-processor:${service.vars.DEMO_PROCESSOR_PASSWORD}`)}`, "content-type": "application/json" };
    // Two changes after which the payment is in progress: held, numbered 1 and 2.
    for (const code of ["PU15", "PU16"]) {
      const res = await fetch(`${service.base}/v2/payments/pmt_demoPaymentInProgress1/events/`, {
        method: "POST",
        headers: processor,
        body: JSON.stringify({ event_code: code, description: code }),
      });
      assert.equal(res.status, 201);
    }
    const page = await signedIn({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${service.base}/console/#/subscriptions/${paused.id}`);
    await page.getByText("2 held").first().waitFor();
    await page.getByText("status in in-progress, settled").waitFor();
    const rows = page.locator(".card:has(#log) tbody tr");
    await until(
      () => rows.allTextContents(),
      (texts) => texts.length === 2 && texts.every((text) => text.includes("held")),
      "two held deliveries",
    );
    assert.deepEqual(await page.locator(".card:has(#log) tbody td[data-label='Seq.']").allTextContents(), ["2", "1"]);
    page.once("dialog", (dialog) => dialog.accept());
    await page.getByRole("button", { name: "Discard held" }).click();
    await page.getByRole("status").filter({ hasText: "Held deliveries discarded." }).waitFor();
    await page.getByText("No deliveries match.").waitFor();
    await page.goto(`${service.base}/console/#/subscriptions/${health.id}`);
    await page.getByText("health events", { exact: true }).first().waitFor();
    await page.getByText("subscription.health").first().waitFor();
    await page.close();
  });

  it("makes an Ed25519 subscription from the form and shows its public key, which verifies its test delivery with the receiver's kit", async () => {
    receiver.mode.status = 200;
    const page = await signedIn({ viewport: { width: 1280, height: 900 } });
    await page.getByRole("button", { name: "New subscription" }).click();
    await page.getByLabel("Description").fill("Ed25519 receiver");
    await page.getByLabel("Endpoint URL").fill(receiver.url);
    await page.getByLabel("Signing").selectOption("ed25519");
    await page.getByLabel("Receiver username").fill("hook-user");
    await page.getByLabel("Receiver password").fill("hook-pass-123");
    await page.getByRole("button", { name: "Create subscription" }).click();
    await page.getByRole("heading", { name: "Ed25519 receiver" }).waitFor();
    const subscriptionId = new URL(page.url()).hash.split("/")[2].split("?")[0];
    const publicKey = (await page.locator("dd", { hasText: "public key" }).locator(".mono").last().textContent()).trim();
    assert.match(publicKey, /^whpk_/);
    await page.getByRole("button", { name: "Send test delivery" }).click();
    const mine = (got) => got.filter((entry) => entry.headers["hook-subscription"] === subscriptionId);
    const [test] = mine(
      await until(
        () => receiver.got,
        (got) => mine(got).length >= 1,
        "the Ed25519 test delivery",
      ),
    );
    assert.match(test.headers["webhook-signature"], /^v1a,/);
    assert.deepEqual(await verify({ body: test.body, headers: test.headers, secrets: [publicKey], username: "hook-user", password: "hook-pass-123" }), {
      ok: true,
      reason: null,
    });
    await page.getByRole("button", { name: "Edit" }).click();
    const signing = page.locator("select[name=signing]");
    assert.equal(await signing.inputValue(), "ed25519");
    assert.equal(await signing.isDisabled(), true);
    await page.close();
  });

  it("shows a subscription waiting for its receiver's proof of ownership, and sends a challenge that releases what it held", async () => {
    receiver.mode.status = 200;
    const admin = { authorization: `Bearer ${service.vars.ADMIN_TOKEN}`, "content-type": "application/json" };
    const setting = (on) =>
      fetch(`${service.base}/admin/accounts/acct_demoAccount000000001/`, { method: "PATCH", headers: admin, body: JSON.stringify({ verify_endpoints: on }) });
    assert.equal((await setting(true)).status, 200);
    try {
      const client = { authorization: `Basic ${btoa(`demo-client:${service.vars.DEMO_CLIENT_PASSWORD}`)}`, "content-type": "application/json" };
      const made = await fetch(`${service.base}/v1/webhooks/`, {
        method: "POST",
        headers: client,
        body: JSON.stringify({
          event: "payment.changed",
          url: receiver.url,
          content_type: "application/json",
          username: "hook-user",
          password: "hook-pass-123",
          description: "proving ownership",
        }),
      }).then((res) => res.json());
      assert.equal(made.verification, "pending");
      const page = await signedIn({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${service.base}/console/#/subscriptions/${made.id}`);
      await page.getByText("receiver not verified yet: deliveries held").waitFor();
      receiver.mode.echo = true;
      await page.getByRole("button", { name: "Verify receiver" }).click();
      await page.getByRole("status").filter({ hasText: "Challenge sent." }).waitFor();
      await until(
        async () => (await fetch(`${service.base}/v1/webhooks/${made.id}/`, { headers: client }).then((res) => res.json())).verification,
        (state) => state === "verified",
        "the receiver verified",
      );
      await page.reload();
      await page.getByText("receiver verified").waitFor();
      await page.close();
    } finally {
      receiver.mode.echo = false;
      await setting(false);
    }
  });

  it("counts a window and replays it, showing its progress, and cancels a replay while it runs", async () => {
    const client = { authorization: `Basic ${btoa(`demo-client:${service.vars.DEMO_CLIENT_PASSWORD}`)}`, "content-type": "application/json" };
    const processor = { authorization: `Basic ${btoa(`demo-processor:${service.vars.DEMO_PROCESSOR_PASSWORD}`)}`, "content-type": "application/json" };
    const made = await fetch(`${service.base}/v1/webhooks/`, {
      method: "POST",
      headers: client,
      body: JSON.stringify({
        event: "payment.changed",
        url: receiver.url,
        content_type: "application/json",
        username: "hook-user",
        password: "hook-pass-123",
        description: "replayed",
      }),
    }).then((res) => res.json());
    for (const code of ["PU15", "PU16"]) {
      const res = await fetch(`${service.base}/v2/payments/pmt_demoPaymentInProgress1/events/`, {
        method: "POST",
        headers: processor,
        body: JSON.stringify({ event_code: code, description: `replayed ${code}` }),
      });
      assert.equal(res.status, 201);
    }
    const mine = () => receiver.got.filter((item) => item.headers["hook-subscription"] === made.id);
    const originals = await until(
      () => mine().filter((item) => !item.headers["hook-replay"]),
      (items) => items.length === 2,
      "the two deliveries",
    );
    const page = await signedIn({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${service.base}/console/#/subscriptions/${made.id}`);
    const replays = page.locator(".card:has(#replay) tbody tr");
    // A receiver slow to answer keeps the first replay running (its first attempts time out at 15 s): it is canceled from its row.
    receiver.mode.delayMs = 20_000;
    try {
      await page.getByRole("button", { name: "Count" }).click();
      await page.getByRole("button", { name: "Replay 2 deliveries" }).click();
      await page.getByRole("button", { name: "Cancel" }).click();
      await until(
        () => replays.first().textContent(),
        (text) => text.includes("canceled"),
        "the replay canceled",
      );
    } finally {
      receiver.mode.delayMs = 0;
    }
    await page.getByRole("button", { name: "Count" }).click();
    await page.getByRole("button", { name: "Replay 2 deliveries" }).click();
    await until(
      () => replays.first().textContent(),
      (text) => text.includes("done") && text.includes("2 of 2"),
      "the replay done",
    );
    await shot(page, "replay");
    const [done] = (await fetch(`${service.base}/v1/webhooks/${made.id}/replays/`, { headers: client }).then((res) => res.json())).results;
    const replayed = await until(
      () => mine().filter((item) => item.headers["hook-replay"] === done.id),
      (items) => items.length === 2,
      "the replayed deliveries",
    );
    // Each original again, as it was: its id, its sequence, its bytes.
    const as = (items) => items.map((item) => [item.headers["webhook-id"], item.headers["hook-sequence"], item.body]).sort();
    assert.deepEqual(as(replayed), as(originals));
    await page.close();
  });

  it("is usable at 375 px wide", async () => {
    const client = { authorization: `Basic ${btoa(`demo-client:${service.vars.DEMO_CLIENT_PASSWORD}`)}`, "content-type": "application/json" };
    const made = await fetch(`${service.base}/v1/webhooks/`, {
      method: "POST",
      headers: client,
      body: JSON.stringify({ event: "payment.changed", url: receiver.url, content_type: "application/json", username: "hook-user", password: "hook-pass-123" }),
    });
    assert.equal(made.status, 201);
    const madeId = (await made.json()).id;
    await fetch(`${service.base}/v1/webhooks/${madeId}/test/`, { method: "POST", headers: client });
    const page = await signedIn({ viewport: { width: 375, height: 812 } });
    await page.locator("tbody a").first().click();
    await page.getByRole("heading", { name: "Health" }).waitFor();
    await page.goto(`${service.base}/console/#/subscriptions/${madeId}`);
    await page.locator("#log ~ * tbody tr, .card:has(#log) tbody tr").first().waitFor();
    // The delivery log reads as one block per delivery, none wider than the screen.
    const log = await page.evaluate(() => {
      const box = document.querySelector(".card:has(#log) .table-wrap");
      return { scroll: box.scrollWidth, client: box.clientWidth };
    });
    assert.ok(log.scroll <= log.client, `the delivery log scrolls sideways (${log.scroll} px in ${log.client} px)`);
    // Nothing wider than the screen but the tables' own scrolling boxes.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
    await page.screenshot({ path: join(SHOTS, "console-375px.png"), fullPage: true });
    await page.close();
  });
});
