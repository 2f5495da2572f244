export const USER_AGENT = "payments-webhooks/0.1.0";
/** How the delivery log shows the Basic credentials an attempt sent. */
export const MASKED_AUTHORIZATION = "Basic ********";

/** The headers an attempt sent that nothing else can rebuild: its signatures. */
const SIGNATURES = ["hook-hmac", "hook-hmac-next", "webhook-signature"] as const;

/** The headers that place a delivery in its subscription's sequence and its payment's versions; none on a test delivery. Pure. */
export function orderHeaders(delivery: { sequence: number | null; paymentVersion: number | null }): Record<string, string> {
  return {
    ...(delivery.sequence !== null ? { "hook-sequence": String(delivery.sequence) } : {}),
    ...(delivery.paymentVersion !== null ? { "hook-payment-version": String(delivery.paymentVersion) } : {}),
  };
}

/** What the delivery log stores of an attempt's headers: the signatures only (JSON). Pure. */
export function storedHeaders(sent: Record<string, string> | null): string | null {
  if (sent === null) return null;
  return JSON.stringify(Object.fromEntries(SIGNATURES.filter((name) => sent[name] !== undefined).map((name) => [name, sent[name]])));
}

/**
 * The headers an attempt sent, in the order it sent them, from what was stored and what the
 * delivery and the attempt say (its id, subscription, content type, start). A row stored with every
 * header (before only the signatures were kept) is shown as stored. Pure.
 */
export function sentHeaders(
  delivery: { id: string; subscriptionId: string; contentType: string; sequence: number | null; paymentVersion: number | null; event?: string | null },
  attempt: { startedAt: number; headers: string | null },
): Record<string, string> | null {
  if (attempt.headers === null) return null;
  const stored = JSON.parse(attempt.headers) as Record<string, string>;
  if (stored.authorization !== undefined) return stored;
  return {
    authorization: MASKED_AUTHORIZATION,
    "content-type": delivery.contentType,
    "hook-subscription": delivery.subscriptionId,
    "hook-delivery": delivery.id,
    "hook-event": delivery.event ?? "payment.changed",
    ...orderHeaders(delivery),
    "user-agent": USER_AGENT,
    "hook-hmac": stored["hook-hmac"]!,
    ...(stored["hook-hmac-next"] !== undefined ? { "hook-hmac-next": stored["hook-hmac-next"] } : {}),
    "webhook-id": delivery.id,
    "webhook-timestamp": String(Math.floor(attempt.startedAt / 1000)),
    "webhook-signature": stored["webhook-signature"]!,
  };
}
