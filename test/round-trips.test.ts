import { describe, expect, it } from "vitest";
import { call, makeInvoice, makePayment, makeTenant, unique, type User } from "./helpers/api";
import { HOOK_USER, receiverUrl } from "./helpers/webhooks";

/**
 * What each request kind costs in D1 round trips, as Server-Timing reports it from outside
 * (docs/performance.md, "At a distance"): a read is the credential check on the directory's
 * primary and one round trip on its shard that a read replica may serve; a write is the
 * credential check and one batch on the shard, an Idempotency-Key included.
 */
const timed = { SERVER_TIMING: "true" };
const figure = (res: { headers: Headers }, name: string) =>
  Number(new RegExp(`${name};desc="(\\d+)"`).exec(res.headers.get("server-timing") ?? "")?.[1] ?? NaN);

async function fixture() {
  const { client, processor } = await makeTenant();
  const made = await makePayment(client);
  return { client, processor, ...made };
}
type Fixture = Awaited<ReturnType<typeof fixture>>;
type Kind = [string, (f: Fixture, keyed: Record<string, string>) => Promise<{ status: number; headers: Headers; json: any }>];

const as = (user: User, keyed: Record<string, string>) => ({ ...user.headers, ...keyed });

const writes: Kind[] = [
  [
    "a new counterparty",
    (f, k) =>
      call("POST", "/v1/counterparties/", { headers: as(f.client, k), body: { internal_id: unique("c"), type: "buyer", name: "Acme" }, bindings: timed }),
  ],
  [
    "a new invoice",
    (f, k) =>
      call("POST", "/v1/invoices/", {
        headers: as(f.client, k),
        body: { invoice_number: unique("INV"), buyer_id: f.buyer.id, supplier_id: f.supplier.id, amount_cents: 100 },
        bindings: timed,
      }),
  ],
  [
    "a new payment",
    async (f, k) => {
      const invoice = await makeInvoice(f.client, f.buyer.id, f.supplier.id);
      return call("POST", "/v2/payments/", {
        headers: as(f.client, k),
        body: { originating_counterparty_id: f.buyer.id, receiving_counterparty_id: f.supplier.id, invoice_ids: [invoice.id], payment_method: "ach" },
        bindings: timed,
      });
    },
  ],
  [
    "a payment event",
    (f, k) =>
      call("POST", `/v2/payments/${f.payment.id}/events/`, { headers: as(f.processor, k), body: { event_code: "PU15", description: "note" }, bindings: timed }),
  ],
  [
    "a new subscription",
    (f, k) =>
      call("POST", "/v1/webhooks/", {
        headers: as(f.client, k),
        body: { event: "payment.changed", url: `${receiverUrl()}/hooks/${unique("rt")}`, content_type: "application/json", ...HOOK_USER, is_active: false },
        bindings: timed,
      }),
  ],
];

const reads: [string, (f: Fixture) => string][] = [
  ["a payment", (f) => `/v2/payments/${f.payment.id}/`],
  ["the payments, polled by updated", () => "/v2/payments/?ordering=updated&updated__gt=2026-01-01T00:00:00Z"],
  ["the invoices", () => "/v1/invoices/"],
  ["a counterparty", (f) => `/v1/counterparties/${f.buyer.id}/`],
];

describe("D1 round trips per request kind", () => {
  it.each(writes)("%s: 2, none a replica may serve, with or without an Idempotency-Key", async (_name, send) => {
    const f = await fixture();
    for (const keyed of [{}, { "Idempotency-Key": unique("k") }] as Record<string, string>[]) {
      const res = await send(f, keyed);
      expect([res.status, figure(res, "d1-calls"), figure(res, "cf-d1-replica-calls")]).toEqual([201, 2, 0]);
    }
  });

  it("a subscription's update or secret rotation: 3, its sealed secrets read first (the Worker opens and seals them again with ENCRYPTION_KEY)", async () => {
    const f = await fixture();
    const made = await writes[4]![1](f, {});
    const id = made.json.id as string;
    const patched = await call("PATCH", `/v1/webhooks/${id}/`, { headers: f.client.headers, body: { description: "renamed" }, bindings: timed });
    const rotated = await call("POST", `/v1/webhooks/${id}/rotate-secret/`, { headers: f.client.headers, bindings: timed });
    for (const res of [patched, rotated]) expect([res.status, figure(res, "d1-calls"), figure(res, "cf-d1-replica-calls")]).toEqual([200, 3, 0]);
  });

  it("a secret rotation with an Idempotency-Key: 4, its key claimed in a round trip of its own before the read (which a replica as new as the claim may then serve)", async () => {
    const f = await fixture();
    const id = (await writes[4]![1](f, {})).json.id as string;
    const keyed = { ...f.client.headers, "Idempotency-Key": unique("k") };
    const rotated = await call("POST", `/v1/webhooks/${id}/rotate-secret/`, { headers: keyed, bindings: timed });
    expect([rotated.status, figure(rotated, "d1-calls"), figure(rotated, "cf-d1-replica-calls")]).toEqual([200, 4, 1]);
    const replayed = await call("POST", `/v1/webhooks/${id}/rotate-secret/`, { headers: keyed, bindings: timed });
    expect([replayed.status, replayed.headers.get("Idempotent-Replayed"), figure(replayed, "d1-calls")]).toEqual([200, "true", 2]);
  });

  it.each(reads)("%s: 2, the shard's a replica may serve", async (_name, path) => {
    const f = await fixture();
    const res = await call("GET", path(f), { headers: f.client.headers, bindings: timed });
    expect([res.status, figure(res, "d1-calls"), figure(res, "cf-d1-replica-calls")]).toEqual([200, 2, 1]);
  });
});
