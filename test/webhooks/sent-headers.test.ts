import { describe, expect, it } from "vitest";
import { sentHeaders, storedHeaders } from "../../src/webhooks/wire/sent-headers";

type Delivery = { id: string; subscriptionId: string; contentType: string; sequence: number | null; paymentVersion: number | null };
const test: Delivery = {
  id: "5d1c7a2e-8f3b-4c6d-9e0a-1b2c3d4e5f60",
  subscriptionId: "0b7f2c1e-4d5a-4e8b-9c3f-2a1b0c9d8e7f",
  contentType: "application/x-www-form-urlencoded",
  sequence: null,
  paymentVersion: null,
};
const change: Delivery = { ...test, sequence: 7, paymentVersion: 3 };
const delivery = test;
const startedAt = Date.UTC(2026, 10, 25, 9, 0, 30, 999);
const sent = (rotating: boolean, of: Delivery = test) => ({
  authorization: "Basic ********",
  "content-type": of.contentType,
  "hook-subscription": of.subscriptionId,
  "hook-delivery": of.id,
  "hook-event": "payment.changed",
  ...(of.sequence !== null ? { "hook-sequence": String(of.sequence), "hook-payment-version": String(of.paymentVersion) } : {}),
  "user-agent": "payments-webhooks/0.1.0",
  "hook-hmac": "old-hmac=",
  ...(rotating ? { "hook-hmac-next": "new-hmac=" } : {}),
  "webhook-id": delivery.id,
  "webhook-timestamp": String(Math.floor(startedAt / 1000)),
  "webhook-signature": rotating ? "v1,new= v1,old=" : "v1,old=",
});

describe("an attempt's headers in the delivery log", () => {
  it.each([
    ["a test delivery, one secret", false, test],
    ["a test delivery, during a rotation", true, test],
    ["a change's delivery, with its sequence and payment version", false, change],
    ["a change's delivery, during a rotation", true, change],
  ])("stores only the signatures and shows every header as sent (%s)", (_, rotating, of) => {
    const stored = storedHeaders(sent(rotating, of));
    expect(stored).toBe(rotating ? "old-hmac=\nv1,new= v1,old=\nnew-hmac=" : "old-hmac=\nv1,old=");
    const shown = sentHeaders(of, { startedAt, headers: stored });
    expect(Object.entries(shown!)).toEqual(Object.entries(sent(rotating, of)));
  });

  it("shows the signatures of a row that kept them as JSON", () => {
    const json = JSON.stringify({ "hook-hmac": "old-hmac=", "hook-hmac-next": "new-hmac=", "webhook-signature": "v1,new= v1,old=" });
    expect(Object.entries(sentHeaders(change, { startedAt, headers: json })!)).toEqual(Object.entries(sent(true, change)));
  });

  it("shows a row stored with every header as it was stored, and nothing for an attempt that sent none", () => {
    const old = { ...sent(false), "user-agent": "payments-webhooks/0.0.9" };
    expect(sentHeaders(delivery, { startedAt, headers: JSON.stringify(old) })).toEqual(old);
    expect(storedHeaders(null)).toBeNull();
    expect(sentHeaders(delivery, { startedAt, headers: null })).toBeNull();
  });
});
