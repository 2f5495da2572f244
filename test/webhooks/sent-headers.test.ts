import { describe, expect, it } from "vitest";
import { sentHeaders, storedHeaders } from "../../src/webhooks/sent-headers";

const delivery = { id: "5d1c7a2e-8f3b-4c6d-9e0a-1b2c3d4e5f60", subscriptionId: "0b7f2c1e-4d5a-4e8b-9c3f-2a1b0c9d8e7f", contentType: "application/x-www-form-urlencoded" };
const startedAt = Date.UTC(2026, 10, 25, 9, 0, 30, 999);
const sent = (rotating: boolean) => ({
  authorization: "Basic ********",
  "content-type": delivery.contentType,
  "hook-subscription": delivery.subscriptionId,
  "hook-delivery": delivery.id,
  "hook-event": "payment.changed",
  "user-agent": "payments-webhooks/0.1.0",
  "hook-hmac": "old-hmac=",
  ...(rotating ? { "hook-hmac-next": "new-hmac=" } : {}),
  "webhook-id": delivery.id,
  "webhook-timestamp": String(Math.floor(startedAt / 1000)),
  "webhook-signature": rotating ? "v1,new= v1,old=" : "v1,old=",
});

describe("an attempt's headers in the delivery log", () => {
  it.each([
    ["one secret", false],
    ["during a rotation", true],
  ])("stores only the signatures and shows every header as sent (%s)", (_, rotating) => {
    const stored = storedHeaders(sent(rotating));
    expect(Object.keys(JSON.parse(stored!))).toEqual(rotating ? ["hook-hmac", "hook-hmac-next", "webhook-signature"] : ["hook-hmac", "webhook-signature"]);
    const shown = sentHeaders(delivery, { startedAt, headers: stored });
    expect(Object.entries(shown!)).toEqual(Object.entries(sent(rotating)));
  });

  it("shows a row stored with every header as it was stored, and nothing for an attempt that sent none", () => {
    const old = { ...sent(false), "user-agent": "payments-webhooks/0.0.9" };
    expect(sentHeaders(delivery, { startedAt, headers: JSON.stringify(old) })).toEqual(old);
    expect(storedHeaders(null)).toBeNull();
    expect(sentHeaders(delivery, { startedAt, headers: null })).toBeNull();
  });
});
