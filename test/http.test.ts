import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { ADMIN, BASE, call, makeCounterparty, makePayment, makeTenant, d1Timing, writtenByTable } from "./helpers/api";

describe("request bodies", () => {
  it("answers 400 for malformed JSON", async () => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/counterparties/", { body: '{"internal_id": "x",', headers: client.headers });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ detail: expect.stringMatching(/^JSON parse error/) });
  });

  it.each([
    ["[1, 2]", "list"],
    ['"text"', "str"],
    ["42", "int"],
    ["null", "NoneType"],
  ])("answers 400 for JSON that is not an object: %s", async (body, type) => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/counterparties/", { body, headers: client.headers });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ non_field_errors: [`Invalid data. Expected a dictionary, but got ${type}.`] });
  });

  it.each(["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"])("answers 415 for %s", async (type) => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/counterparties/", { body: "internal_id=x", headers: { ...client.headers, "content-type": type } });
    expect(res.status).toBe(415);
    expect(res.json).toEqual({ detail: expect.stringContaining("Unsupported media type") });
  });

  it("takes application/json with a charset", async () => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/counterparties/", {
      body: { internal_id: "c1", type: "buyer", name: "n" },
      headers: { ...client.headers, "content-type": "application/json; charset=utf-8" },
    });
    expect(res.status).toBe(201);
  });

  it("reads an empty body as an empty object", async () => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/counterparties/", { headers: client.headers });
    expect(res.status).toBe(400);
    expect(Object.keys(res.json).sort()).toEqual(["internal_id", "name", "type"]);
  });

  it("answers 413 for a body over 1 MiB, and writes nothing", async () => {
    const { client } = await makeTenant();
    const name = "x".repeat(1024 * 1024);
    const res = await call("POST", "/v1/counterparties/", { body: { internal_id: "big", type: "buyer", name }, headers: client.headers });
    expect(res.status).toBe(413);
    expect(res.json).toEqual({ detail: expect.any(String) });
    const list = await call("GET", "/v1/counterparties/", { headers: client.headers });
    expect(list.json.count).toBe(0);
  });

  it.each(["GET", "HEAD", "DELETE", "OPTIONS"])("ignores a chunked body sent with %s, on every path, without credentials too", async (method) => {
    const { client } = await makeTenant();
    for (const [path, headers] of [
      ["/healthz", {}],
      ["/v1/counterparties/", client.headers],
      ["/v1/counterparties/", {}],
      ["/nowhere", {}],
    ] as const) {
      // A runtime Request cannot carry a body with GET; one from the wire can (Transfer-Encoding: chunked).
      const request = new Request(`${BASE}${path}`, { method, headers: { ...headers, "transfer-encoding": "chunked" } });
      Object.defineProperty(request, "body", { value: new Blob(["x".repeat(10)]).stream() });
      const response = await worker.fetch(request as Parameters<typeof worker.fetch>[0], env, createExecutionContext());
      expect(response.status, `${method} ${path}`).toBeLessThan(500);
    }
  });

  it("ignores unknown fields, as DRF does", async () => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/counterparties/", {
      body: { internal_id: "u", type: "buyer", name: "n", id: "cpty_mine", extra: 1 },
      headers: client.headers,
    });
    expect(res.status).toBe(201);
    expect(res.json.id).not.toBe("cpty_mine");
    expect(res.json.extra).toBeUndefined();
  });
});

describe("routing", () => {
  it("answers 405 with Allow for a method a path does not take", async () => {
    const { client } = await makeTenant();
    const cp = await makeCounterparty(client, "buyer");
    const list = await call("DELETE", "/v1/counterparties/", { headers: client.headers });
    expect(list.status).toBe(405);
    expect(list.headers.get("allow")).toBe("GET, HEAD, OPTIONS, POST");
    expect(list.json).toEqual({ detail: 'Method "DELETE" not allowed.' });
    const detail = await call("PUT", `/v1/counterparties/${cp.id}`, { body: {}, headers: client.headers });
    expect(detail.status).toBe(405);
    expect(detail.headers.get("allow")).toBe("GET, HEAD, OPTIONS, PATCH");
  });

  it("answers OPTIONS with the allowed methods", async () => {
    const { client } = await makeTenant();
    const res = await call("OPTIONS", "/v2/payments/", { headers: client.headers });
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS, POST");
  });

  it("answers 404 in the error shape for an unknown path", async () => {
    const { client } = await makeTenant();
    const res = await call("GET", "/v1/nothing-here/", { headers: client.headers });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ detail: "Not found." });
  });

  it("serves each path with and without its trailing slash, without redirects", async () => {
    const { client } = await makeTenant();
    for (const path of ["/v1/counterparties", "/v1/counterparties/", "/v1/invoices", "/v2/payments/", "/healthz/", "/healthz"]) {
      const res = await call("GET", path, { headers: client.headers });
      expect(res.status, path).toBe(200);
    }
  });
});

describe("Server-Timing", () => {
  it("reports the request's D1 rows read and written, statements, round trips and SQL time when SERVER_TIMING is on, and nothing otherwise", async () => {
    const { client } = await makeTenant();
    await makeCounterparty(client, "buyer");
    await makeCounterparty(client, "supplier");
    const on = await call("GET", "/v1/counterparties/?type=buyer", { headers: client.headers, bindings: { SERVER_TIMING: "true" } });
    expect(on.headers.get("server-timing")).toMatch(
      /^d1-rows-read;desc="\d+", d1-rows-written;desc="\d+", d1-statements;desc="\d+", d1-calls;desc="\d+", d1-sql;dur=[0-9.]+, cf-d1-replica-calls;desc="\d+", cf-connections-peak;desc="\d+", cf-connections-waited;desc="0", cf-subrequests;desc="\d+", cf-d1-queries;desc="\d+", cf-largest-result;desc="\d+", cf-largest-value;desc="\d+"$/,
    );
    const read = d1Timing(on);
    // The platform's view of the same request (src/dev/within-limits.ts): its queries, one connection at a time.
    expect(on.headers.get("server-timing")).toContain(`cf-d1-queries;desc="${read.statements}"`);
    expect(on.headers.get("server-timing")).toContain('cf-connections-peak;desc="1"');
    expect(read.rowsRead).toBeGreaterThan(0);
    expect(read.rowsWritten).toBe(0);
    expect(read.statements).toBe(4); // the user and its failure counts (one batch), the page, the count
    expect(read.calls).toBe(2); // the credential check; the page with its count
    expect(read.sqlMs).toBeGreaterThanOrEqual(0);
    const write = await call("POST", "/v1/counterparties/", {
      headers: client.headers,
      body: { internal_id: "timed", type: "buyer", name: "Timed" },
      bindings: { SERVER_TIMING: "true" },
    });
    expect(write.status).toBe(201);
    // The row, its indexes' entries and the stored counts: D1 bills each.
    expect(d1Timing(write).rowsWritten).toBeGreaterThan(1);
    // Where the rows went: the counterparty's own table (its row and index entries) among them, adding up to the total.
    const byTable = writtenByTable(write);
    expect(Object.keys(byTable)).toContain("counterparties");
    expect(Object.values(byTable).reduce((sum, n) => sum + n, 0)).toBe(d1Timing(write).rowsWritten);
    const off = await call("GET", "/v1/counterparties/", { headers: client.headers });
    expect(off.headers.get("server-timing")).toBeNull();
  });
});

describe("a list page's round trips to D1", () => {
  const calls = (res: { headers: Headers }) => Number(/d1-calls;desc="(\d+)"/.exec(res.headers.get("server-timing") ?? "")![1]);
  // A tenant with two invoices between counterparties B-1 and S-1, and a pending
  // payment of a third invoice between two other counterparties.
  it.each([
    ["no filter", "/v1/invoices/", 3],
    ["one value", "/v1/invoices/?invoice_number=A-1", 1],
    ["several values of a repeated filter (read value by value)", "/v1/invoices/?invoice_number=A-1&invoice_number=A-2&invoice_number=A-3", 2],
    ["several values, page 2", "/v1/invoices/?invoice_number=A-1&invoice_number=A-2&page=2&page_size=1", 2],
    ["a created range", "/v1/invoices/?created__gte=2020-01-01", 3],
    ["several internal_ids", "/v1/counterparties/?internal_id=B-1&internal_id=S-1", 2],
    ["payments by two statuses", "/v2/payments/?status=pending&status=settled", 1],
    ["page=N, found through the time buckets", "/v1/invoices/?page=2&page_size=1", 3],
    ["page=N of a created range", "/v1/invoices/?created__gte=2020-01-01&page=3&page_size=1", 3],
  ])("%s: the user, then the page with its count in one batch", async (_, path, count) => {
    const { client } = await makeTenant();
    const buyer = await makeCounterparty(client, "buyer", { internal_id: "B-1" });
    const supplier = await makeCounterparty(client, "supplier", { internal_id: "S-1" });
    for (const number of ["A-1", "A-2"]) {
      await call("POST", "/v1/invoices/", {
        body: { invoice_number: number, buyer_id: buyer.id, supplier_id: supplier.id, amount_cents: 100 },
        headers: client.headers,
      });
    }
    await makePayment(client);
    const res = await call("GET", path, { headers: client.headers, bindings: { SERVER_TIMING: "true" } });
    expect(res.status).toBe(200);
    expect(res.json.count).toBe(count);
    expect(calls(res)).toBe(2);
  });
});

describe("x-request-id", () => {
  it("keeps a sane caller id and makes one otherwise", async () => {
    const kept = await call("GET", "/healthz", { headers: { "x-request-id": "abc-123.XYZ_9" } });
    expect(kept.headers.get("x-request-id")).toBe("abc-123.XYZ_9");
    const replaced = await call("GET", "/healthz", { headers: { "x-request-id": "bad id <script>" } });
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const made = await call("GET", "/healthz");
    expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("is on errors too", async () => {
    const res = await call("GET", "/v2/payments/");
    expect(res.status).toBe(401);
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });
});

describe("service endpoints", () => {
  it("answers /healthz without auth", async () => {
    const res = await call("GET", "/healthz");
    expect(res).toMatchObject({ status: 200, json: { status: "ok" } });
  });

  it("describes every route in /openapi.json (OpenAPI 3.1)", async () => {
    const res = await call("GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.json.openapi).toBe("3.1.0");
    const paths = Object.keys(res.json.paths);
    // Written as the README and the links write them: with the trailing slash.
    for (const path of [
      "/v1/counterparties/",
      "/v1/counterparties/{id}/",
      "/v1/invoices/",
      "/v1/invoices/{id}/",
      "/v2/payments/",
      "/v2/payments/{id}/",
      "/v2/payments/{id}/events/",
      "/v1/webhooks/{id}/deliveries/",
      "/admin/accounts/",
      "/admin/accounts/{account_id}/api-users/",
    ]) {
      expect(paths, path).toContain(path);
    }
    expect(paths.filter((p) => /^\/(v1|v2|admin)\//.test(p) && !p.endsWith("/"))).toEqual([]);
    const params = res.json.paths["/v2/payments/"].get.parameters;
    expect(params.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(["status", "updated__gt", "ordering", "page", "page_size"]));
  });

  it("serves /docs from this origin only", async () => {
    const res = await call("GET", "/docs");
    expect(res.status).toBe(200);
    expect(res.json).toContain("/openapi.json");
    expect(res.json).toContain('<script src="/docs/redoc.standalone.js">');
    expect(res.json).not.toMatch(/https?:\/\//);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    // No other origin may frame it (clickjacking).
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
  });

  it("leads a browser from / to /docs and gives a program the service's links", async () => {
    const browser = await call("GET", "/", { headers: { accept: "text/html,application/xhtml+xml" } });
    expect(browser.status).toBe(302);
    expect(browser.headers.get("location")).toBe("/docs");
    const program = await call("GET", "/");
    expect(program.json).toEqual({ docs: `${BASE}/docs`, openapi: `${BASE}/openapi.json`, health: `${BASE}/healthz` });
  });

  it("turns the admin API off when ADMIN_TOKEN is missing or empty", async () => {
    for (const token of [undefined, ""]) {
      const res = await call("GET", "/admin/accounts/", { headers: ADMIN, bindings: { ADMIN_TOKEN: token } });
      expect(res.status).toBe(403);
      expect(res.json).toEqual({ detail: expect.stringContaining("disabled") });
    }
  });
});

describe("paging", () => {
  async function fiveCounterparties() {
    const { client } = await makeTenant();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await makeCounterparty(client, "buyer"));
    return { client, ids: made.map((c) => c.id) };
  }
  const path = (url: string) => url.slice(BASE.length);

  it("follows next and previous links through the whole list", async () => {
    const { client, ids } = await fiveCounterparties();
    const first = await call("GET", "/v1/counterparties/?page_size=2&type=buyer", { headers: client.headers });
    expect(first.json).toMatchObject({ count: 5, previous: null });
    expect(first.json.next).toMatch(/^https:\/\/payments\.test\/v1\/counterparties\/\?/);
    expect(new URL(first.json.next).searchParams.get("type")).toBe("buyer");
    const second = await call("GET", path(first.json.next), { headers: client.headers });
    const third = await call("GET", path(second.json.next), { headers: client.headers });
    expect(third.json.next).toBeNull();
    expect([...first.json.results, ...second.json.results, ...third.json.results].map((c: { id: string }) => c.id)).toEqual(ids);
    expect(third.json.count).toBe(5);
    const back = await call("GET", path(third.json.previous), { headers: client.headers });
    expect(back.json.results).toEqual(second.json.results);
    const backAgain = await call("GET", path(back.json.previous), { headers: client.headers });
    expect(backAgain.json.results).toEqual(first.json.results);
    expect(backAgain.json.previous).toBeNull();
  });

  it("serves page=N directly, with links", async () => {
    const { client, ids } = await fiveCounterparties();
    const page2 = await call("GET", "/v1/counterparties/?page_size=2&page=2", { headers: client.headers });
    expect(page2.json.results.map((c: { id: string }) => c.id)).toEqual(ids.slice(2, 4));
    expect(page2.json.previous).toBe(`${BASE}/v1/counterparties/?page_size=2`);
    const page3 = await call("GET", path(page2.json.next), { headers: client.headers });
    expect(page3.json.results.map((c: { id: string }) => c.id)).toEqual(ids.slice(4));
  });

  it.each([
    ["page=4&page_size=2", "Invalid page."],
    ["page=0", "Invalid page."],
    ["page=-1", "Invalid page."],
    ["page=abc", "Invalid page."],
    ["cursor=garbage", "Invalid cursor."],
  ])("answers 404 for %s", async (query, detail) => {
    const { client } = await fiveCounterparties();
    const res = await call("GET", `/v1/counterparties/?${query}`, { headers: client.headers });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ detail });
  });

  it("never treats page 1 as past the end", async () => {
    const { client } = await makeTenant();
    const res = await call("GET", "/v1/counterparties/?page=1", { headers: client.headers });
    expect(res.json).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it("clamps page_size to 1000 and reads a bad one as the default", async () => {
    const { client } = await fiveCounterparties();
    const big = await call("GET", "/v1/counterparties/?page_size=5000", { headers: client.headers });
    expect(big.status).toBe(200);
    expect(big.json.results).toHaveLength(5);
    const bad = await call("GET", "/v1/counterparties/?page_size=lots", { headers: client.headers });
    expect(bad.json.results).toHaveLength(5);
    const one = await call("GET", "/v1/counterparties/?page_size=1", { headers: client.headers });
    expect(one.json.results).toHaveLength(1);
  });
});
