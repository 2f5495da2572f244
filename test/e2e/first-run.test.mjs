// A newcomer's first run, from outside: `npm start` in a fresh copy, /docs in a real browser
// (Debian's Chromium through playwright-core), the OpenAPI document through Redocly's linter, and
// what `npm start` says when its checkout already runs, when its port is taken, or when .dev.vars
// was deleted under existing data.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { launchBrowser, noBrowser, openPage } from "./browser.mjs";
import { freePort, freshCopy, ROOT, run, startNpmStart as startService } from "../../tools/lib/service.mjs";
const ARTIFACTS = join(ROOT, "artifacts");

describe("npm start, as a newcomer runs it", () => {
  let copy;
  let service;

  before(async () => {
    copy = freshCopy();
    service = await startService(copy.dir, await freePort());
  });

  after(async () => {
    await service?.stop();
    copy?.remove();
  });

  it("leads a browser from / to /docs, which renders every operation from this server alone", { skip: noBrowser }, async () => {
    const browser = await launchBrowser();
    try {
      const page = await openPage(browser, { viewport: { width: 1280, height: 900 } });
      const elsewhere = [];
      page.on("request", (request) => {
        const url = request.url();
        if (!url.startsWith(service.base) && !url.startsWith("data:") && !url.startsWith("blob:")) elsewhere.push(url);
      });
      await page.goto(`${service.base}/`);
      assert.equal(new URL(page.url()).pathname, "/docs");
      for (const summary of ["Create a payment", "Record a payment event", "List and poll payments", "Subscribe to payment.changed", "Health check"]) {
        // Redoc renders each operation as a heading in the main column.
        await page.locator("h2", { hasText: summary }).first().waitFor({ timeout: 90_000 });
      }
      await page.locator("h2", { hasText: "A payment changed" }).first().waitFor();
      mkdirSync(join(ARTIFACTS, "screenshots"), { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "screenshots", "docs.png") });
      assert.deepEqual(elsewhere, [], "the docs page asked another origin for something");
    } finally {
      await browser.close();
    }
  });

  it("serves an OpenAPI document that passes Redocly's recommended rules (test/e2e/redocly.yaml)", async () => {
    const document = await (await fetch(`${service.base}/openapi.json`)).json();
    const file = join(copy.dir, "openapi.json");
    writeFileSync(file, JSON.stringify(document, null, 2));
    const lint = await run(
      join(copy.dir, "node_modules/.bin/redocly"),
      ["lint", `--config=${join(import.meta.dirname, "redocly.yaml")}`, "--format=json", file],
      { cwd: copy.dir },
    );
    const problems = JSON.parse(lint.stdout.slice(lint.stdout.indexOf("{"))).problems;
    const summary = problems.map((p) => `${p.severity} ${p.ruleId} ${p.location?.[0]?.pointer}`);
    // /healthz has no 4xx answer to describe; the rule's one warning is expected there and nowhere else.
    assert.deepEqual(summary, ["warn operation-4xx-response #/paths/~1healthz/get/responses"]);
    assert.equal(lint.code, 0, lint.stderr);
  });

  it("refuses a second service on the same checkout, on its port or another, in one line naming the running one, and starts nothing", async () => {
    const port = new URL(service.base).port;
    for (const second of [port, String(await freePort())]) {
      const refused = await run(process.execPath, ["tools/dev/start.mjs"], { cwd: copy.dir, env: { ...process.env, PORT: second } });
      assert.equal(refused.code, 1);
      assert.equal(refused.stdout, "");
      assert.match(
        refused.stderr.trim(),
        new RegExp(
          `^npm start: this checkout's service already runs \\(process \\d+, http://127\\.0\\.0\\.1:${port}\\) on its local database; use that one, or stop it first \\(kill \\d+\\)\\.`,
        ),
      );
    }
    assert.equal((await fetch(`${service.base}/healthz`)).status, 200);
  });

  it("says in one line that its port is taken by another program, with the PORT= fix, and starts nothing", async () => {
    const other = freshCopy();
    const taken = createServer().listen(0, "127.0.0.1");
    await once(taken, "listening");
    const port = taken.address().port;
    try {
      const refused = await run(process.execPath, ["tools/dev/start.mjs"], { cwd: other.dir, env: { ...process.env, PORT: String(port) } });
      assert.equal(refused.code, 1);
      assert.equal(refused.stdout, "");
      assert.equal(refused.stderr.trim(), `npm start: port ${port} on 127.0.0.1 is in use; run PORT=${port + 1} npm start to use another.`);
    } finally {
      taken.close();
      other.remove();
    }
  });

  it("keeps the old local database aside, never under a new key, when .dev.vars is deleted", async () => {
    const { base, vars } = service;
    const client = { authorization: `Basic ${btoa(`demo-client:${vars.DEMO_CLIENT_PASSWORD}`)}`, "content-type": "application/json" };
    const made = await fetch(`${base}/v1/webhooks/`, {
      method: "POST",
      headers: client,
      body: JSON.stringify({ event: "payment.changed", url: "http://127.0.0.1:9/hooks", content_type: "application/json", username: "u", password: "p" }),
    });
    assert.equal(made.status, 201);
    await service.stop();
    rmSync(join(copy.dir, ".dev.vars"));
    service = await startService(copy.dir, await freePort());
    assert.match(service.output(), /The local database was sealed with the old ENCRYPTION_KEY: it is kept in \.wrangler\/state-before-/);
    assert.equal(readdirSync(join(copy.dir, ".wrangler")).filter((name) => name.startsWith("state-before-")).length, 1);
    const fresh = { authorization: `Basic ${btoa(`demo-client:${service.vars.DEMO_CLIENT_PASSWORD}`)}` };
    const list = await fetch(`${service.base}/v1/webhooks/`, { headers: fresh });
    assert.equal(list.status, 200);
    assert.equal((await list.json()).count, 0);
  });
});
