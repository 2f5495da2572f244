import { z } from "@hono/zod-openapi";
import { PAYMENT_METHODS, PAYMENT_STATUSES } from "../../db/schema";
import { choiceFilter, createdFilters, pagingParams, singleChoice, textFilter, timeFilter } from "../../lib/filters";

export const PaymentInput = z
  .object({
    originating_counterparty_id: z.string().min(1).max(64),
    receiving_counterparty_id: z.string().min(1).max(64),
    invoice_ids: z.array(z.string().min(1).max(64)).min(1).max(100),
    payment_method: z.enum(PAYMENT_METHODS),
  })
  .openapi("PaymentInput");

export const PaymentEventInput = z
  .object({
    event_code: z.string().trim().min(1).max(64),
    description: z.string().trim().min(1).max(1000),
    status: z.enum(PAYMENT_STATUSES).optional(),
    instrument_number: z.string().trim().min(1).max(255).nullable().optional(),
    refund_reason: z.string().trim().min(1).max(1000).nullable().optional(),
  })
  .openapi("PaymentEventInput");

export const PaymentEventSchema = z
  .object({
    id: z.string().openapi({ example: "pev_Zr3kP0aQ7mLx2bV9cN1tY4" }),
    event_code: z.string().openapi({ example: "PU00" }),
    status: z.enum(PAYMENT_STATUSES),
    description: z.string(),
    created: z.string().datetime(),
  })
  .openapi("PaymentEvent");

export const PaymentSchema = z
  .object({
    id: z.string().openapi({ example: "pmt_Q2w9Er7tY1uI3oP5aS8dF0" }),
    originating_counterparty_id: z.string(),
    receiving_counterparty_id: z.string(),
    invoices: z.array(z.object({ id: z.string(), invoice_number: z.string(), amount_cents: z.number().int() })),
    amount_cents: z.number().int(),
    currency: z.string(),
    payment_method: z.enum(PAYMENT_METHODS),
    status: z.enum(PAYMENT_STATUSES),
    instrument_number: z.string().nullable(),
    events: z.array(PaymentEventSchema),
    refund_reason: z.string().nullable(),
    created: z.string().datetime(),
    updated: z.string().datetime(),
  })
  .openapi("Payment");

export const PaymentQuery = z.object({
  status: choiceFilter(PAYMENT_STATUSES),
  originating_counterparty_id: textFilter(),
  receiving_counterparty_id: textFilter(),
  ...createdFilters,
  updated__gt: timeFilter(),
  updated__gte: timeFilter(),
  updated__lt: timeFilter(),
  updated__lte: timeFilter(),
  ordering: singleChoice(["created", "updated"] as const),
  ...pagingParams,
});
