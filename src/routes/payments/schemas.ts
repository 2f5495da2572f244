import { z } from "@hono/zod-openapi";
import { PAYMENT_METHODS, PAYMENT_STATUSES } from "../../db/schema";
import { choiceFilter, createdFilters, pagingParams, repeatable, singleChoice, textFilter, timeRange } from "../../lib/filters";
import { timestamp } from "../common";
import { amountCents } from "../invoices/schemas";

const counterpartyId = (description: string, example: string) => z.string().min(1).max(64).openapi({ description, example });
const buyerId = counterpartyId("The buyer, who pays.", "cpty_demoBuyerAcme00000001");
const supplierId = counterpartyId("The supplier, who is paid.", "cpty_demoSupplierNorthwind1");
const method = z.enum(PAYMENT_METHODS).openapi({ description: "How the money moves.", example: "ach" });
const status = z.enum(PAYMENT_STATUSES).openapi({
  description: "The lifecycle: pending -> in-progress | canceled | failed; in-progress -> settled | canceled | failed; settled -> refunded.",
  example: "pending",
});

export const PaymentInput = z.object({
  originating_counterparty_id: buyerId,
  receiving_counterparty_id: supplierId,
  invoice_ids: z
    .array(z.string().min(1).max(64))
    .min(1)
    .max(100)
    .openapi({
      description: "1 to 100 invoices, all between this buyer and supplier, in one currency, and in no other live payment.",
      example: ["inv_demoInvoice0000000005"],
    }),
  payment_method: method,
});

export const PaymentEventInput = z.object({
  event_code: z.string().trim().min(1).max(64).openapi({ description: "The processor's code for the event.", example: "PU10" }),
  description: z.string().trim().min(1).max(1000).openapi({ description: "What happened, in words.", example: "Sent to the bank" }),
  status: status.optional().openapi({ description: "The status the payment moves to; leave it out to keep the current one.", example: "in-progress" }),
  instrument_number: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .nullable()
    .optional()
    .openapi({ description: "Check number, ACH trace or card last 4; leave it out to keep the current one, null to clear it.", example: "ACH-778899" }),
  refund_reason: z
    .string()
    .trim()
    .min(1)
    .max(1000)
    .nullable()
    .optional()
    .openapi({ description: "Required with status `refunded`, and accepted only there.", example: "Paid twice" }),
});

export const PaymentEventSchema = z
  .object({
    id: z.string().openapi({ description: "The event's id.", example: "pev_Zr3kP0aQ7mLx2bV9cN1tY4" }),
    event_code: z.string().openapi({ description: "The processor's code; PU00 is the creation.", example: "PU00" }),
    status: status.openapi({ description: "The payment's status after this event.", example: "pending" }),
    description: z.string().openapi({ description: "What happened.", example: "Payment created" }),
    created: timestamp("When it was recorded."),
  })
  .openapi("PaymentEvent");

export const PaymentSchema = z
  .object({
    id: z.string().openapi({ description: "The payment's id.", example: "pmt_Q2w9Er7tY1uI3oP5aS8dF0" }),
    originating_counterparty_id: buyerId,
    receiving_counterparty_id: supplierId,
    invoices: z
      .array(
        z.object({
          id: z.string().openapi({ description: "The invoice's id.", example: "inv_demoInvoice0000000005" }),
          invoice_number: z.string().openapi({ description: "The invoice's number.", example: "INV-1005" }),
          amount_cents: amountCents,
        }),
      )
      .openapi({ description: "The invoices it pays, oldest first." }),
    amount_cents: amountCents.openapi({ description: "The sum of its invoices.", example: 72500 }),
    currency: z.string().openapi({ description: "ISO 4217 code, shared by all its invoices.", example: "USD" }),
    payment_method: method,
    status,
    instrument_number: z.string().nullable().openapi({ description: "Check number, ACH trace or card last 4; null until known.", example: null }),
    events: z.array(PaymentEventSchema).openapi({ description: "Every event, oldest first." }),
    refund_reason: z.string().nullable().openapi({ description: "Why it was refunded; null unless refunded.", example: null }),
    version: z.int().openapi({
      description:
        "1 at creation, one more with every event (so it counts `events`). Deliveries carry it in `hook-payment-version`: a receiver that has seen version n of a payment can drop anything older.",
      example: 1,
    }),
    created: timestamp("When it was created."),
    updated: timestamp("When it last changed; strictly increasing within an account."),
  })
  .openapi("Payment");

export const PaymentQuery = z.object({
  ...repeatable("status", choiceFilter(PAYMENT_STATUSES, "Only payments in these statuses.")),
  ...repeatable("originating_counterparty_id", textFilter("Only payments from these buyers.", "cpty_demoBuyerAcme00000001")),
  ...repeatable("receiving_counterparty_id", textFilter("Only payments to these suppliers.", "cpty_demoSupplierNorthwind1")),
  ...createdFilters,
  ...timeRange("updated"),
  ordering: singleChoice(["created", "updated"] as const, "Sort by `created` (default) or `updated`, ascending, ties by id."),
  ...pagingParams("payments"),
});
