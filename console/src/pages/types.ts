/** The API's records, as the generated client's types name them (packages/client, from /openapi.json). */
import type { components } from "../../../packages/client/src/schema";

type Schemas = components["schemas"];

export type Subscription = Schemas["WebhookSubscription"];
export type Delivery = Schemas["WebhookDelivery"];
export type Attempt = Delivery["attempts"][number];
export type Stats = Schemas["WebhookStats"];
export type Replay = Schemas["WebhookReplay"];
export type Payment = Schemas["Payment"];
export type PaymentEvent = Schemas["PaymentEvent"];
export type Counterparty = Schemas["Counterparty"];
export type Invoice = Schemas["Invoice"];
export type InvoiceDetail = Schemas["InvoiceDetail"];
