import { describe, expect, it } from "vitest";
import { PAYMENT_STATUSES } from "../../src/db/schema";
import { canMove, releasesInvoices } from "../../src/services/payments/lifecycle";

const ALLOWED = new Set([
  "pending>in-progress",
  "pending>canceled",
  "pending>failed",
  "in-progress>settled",
  "in-progress>canceled",
  "in-progress>failed",
  "settled>refunded",
]);

describe("the payment lifecycle", () => {
  const pairs = PAYMENT_STATUSES.flatMap((from) => PAYMENT_STATUSES.map((to) => [from, to] as const));
  it.each(pairs)("%s -> %s", (from, to) => {
    expect(canMove(from, to)).toBe(ALLOWED.has(`${from}>${to}`));
  });

  it("frees invoices only when a payment is canceled or failed", () => {
    expect(PAYMENT_STATUSES.filter(releasesInvoices)).toEqual(["canceled", "failed"]);
  });
});
