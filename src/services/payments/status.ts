import type { PaymentStatus } from "../../db/schema";

/** The lifecycle (docs/interface.md, "Payment lifecycle"): every move not listed here is refused. */
export const NEXT_STATUSES: Record<PaymentStatus, readonly PaymentStatus[]> = {
  pending: ["in-progress", "canceled", "failed"],
  "in-progress": ["settled", "canceled", "failed"],
  settled: ["refunded"],
  canceled: [],
  failed: [],
  refunded: [],
};

export function canMove(from: PaymentStatus, to: PaymentStatus): boolean {
  return NEXT_STATUSES[from].includes(to);
}

/** A canceled or failed payment lets go of its invoices, so a new payment may cover them. */
export function releasesInvoices(status: PaymentStatus): boolean {
  return status === "canceled" || status === "failed";
}
