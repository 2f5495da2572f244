import { describe, expect, it } from "vitest";
import { ADMIN, basic, call, makeAccount, makePayment, makeTenant, makeUser } from "./helpers/api";

const CHALLENGE = 'Basic realm="payments"';

describe("Basic auth for API users", () => {
  it("lets a user with the right password in", async () => {
    const { client } = await makeTenant();
    const res = await call("GET", "/v1/counterparties/", { headers: client.headers });
    expect(res.status).toBe(200);
  });

  it.each([
    ["no header", () => ({})],
    ["a wrong password", (u: { username: string }) => ({ authorization: basic(u.username, "wrong") })],
    ["an unknown user", () => ({ authorization: basic("nobody-here", "whatever") })],
    ["a header that is not Basic", () => ({ authorization: "Bearer abc" })],
    ["Basic with bad base64", () => ({ authorization: "Basic !!!" })],
    ["Basic without a colon", () => ({ authorization: `Basic ${btoa("justauser")}` })],
    ["an empty Basic", () => ({ authorization: "Basic " })],
  ])("answers 401 with a challenge for %s", async (_label, headers) => {
    const { client } = await makeTenant();
    const res = await call("GET", "/v1/invoices/", { headers: headers(client) });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(CHALLENGE);
    expect(Object.keys(res.json)).toEqual(["detail"]);
  });

  const odd: [string, string, Record<string, string>][] = [
    ["text/plain", "internal_id=x", { "content-type": "text/plain" }],
    ["malformed JSON", '{"internal_id": ', {}],
    ["JSON that is not an object", "[1, 2]", {}],
    ["a body over 1 MiB", JSON.stringify({ name: "x".repeat(1024 * 1024 + 1) }), {}],
  ];

  it.each(odd)("answers 401 before reading a body (%s)", async (_label, body, headers) => {
    for (const [method, path] of [
      ["POST", "/v1/counterparties/"],
      ["PATCH", "/v1/webhooks/x/"],
      ["PUT", "/v1/webhooks/x/"],
      ["POST", "/v2/payments/"],
    ]) {
      const res = await call(method!, path!, { body, headers });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe(CHALLENGE);
    }
  });

  it.each(odd)("answers 401 on the admin API before reading a body (%s)", async (_label, body, headers) => {
    const res = await call("POST", "/admin/accounts/", { body, headers: { ...headers, authorization: "Bearer wrong" } });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ detail: "Invalid or missing admin token." });
  });

  it("guards every API prefix", async () => {
    for (const path of ["/v1/counterparties/", "/v1/invoices/x/", "/v2/payments/", "/v2/payments/pmt_x/events/"]) {
      const res = await call(path.endsWith("events/") ? "POST" : "GET", path, { body: path.endsWith("events/") ? {} : undefined });
      expect(res.status, path).toBe(401);
    }
  });

  it("shuts out a deleted user", async () => {
    const account = await makeAccount();
    const user = await makeUser(account.id);
    expect((await call("DELETE", `/admin/accounts/${account.id}/api-users/${user.username}/`, { headers: ADMIN })).status).toBe(204);
    const res = await call("GET", "/v1/invoices/", { headers: user.headers });
    expect(res.status).toBe(401);
  });

  it("shuts out a rotated password and lets the new one in", async () => {
    const account = await makeAccount();
    const user = await makeUser(account.id);
    const rotated = await call("POST", `/admin/accounts/${account.id}/api-users/${user.username}/rotate/`, { headers: ADMIN });
    expect(rotated.status).toBe(200);
    expect(rotated.json.password).not.toBe(user.password);
    expect((await call("GET", "/v1/invoices/", { headers: user.headers })).status).toBe(401);
    const fresh = { authorization: basic(user.username, rotated.json.password) };
    expect((await call("GET", "/v1/invoices/", { headers: fresh })).status).toBe(200);
  });
});

describe("roles", () => {
  it("refuses a client recording a payment event with 403, whatever the body", async () => {
    const { client } = await makeTenant();
    const { payment } = await makePayment(client);
    for (const body of [{ event_code: "PU10", description: "x", status: "in-progress" }, {}]) {
      const res = await call("POST", `/v2/payments/${payment.id}/events/`, { body, headers: client.headers });
      expect(res.status).toBe(403);
      expect(res.json.detail).toMatch(/processor/);
    }
    const after = await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers });
    expect(after.json.status).toBe("pending");
    expect(after.json.events).toHaveLength(1);
  });

  it("lets a processor do what a client does", async () => {
    const { processor } = await makeTenant();
    const { payment } = await makePayment(processor);
    expect(payment.status).toBe("pending");
  });
});
