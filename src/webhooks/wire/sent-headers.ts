export const USER_AGENT = "payments-webhooks/0.1.0";
/** How the delivery log shows the Basic credentials an attempt sent. */
export const MASKED_AUTHORIZATION = "Basic ********";

/** The headers an attempt sent that nothing else can rebuild: its signatures (`hook-hmac-next` only during a rotation, so last). */
const SIGNATURES = ["hook-hmac", "webhook-signature", "hook-hmac-next"] as const;

/** The headers that place a delivery in its subscription's sequence and its payment's versions (none on a test delivery), and name the replay that sends it again. Pure. */
export function orderHeaders(delivery: { sequence: number | null; paymentVersion: number | null; replayId?: string | null }): Record<string, string> {
  return {
    ...(delivery.sequence !== null ? { "hook-sequence": String(delivery.sequence) } : {}),
    ...(delivery.paymentVersion !== null ? { "hook-payment-version": String(delivery.paymentVersion) } : {}),
    ...(delivery.replayId ? { "hook-replay": delivery.replayId } : {}),
  };
}

/** A delivery row's columns that its replays change on the wire. */
type Replayed = { id: string; sequence: number | null; replayId?: string | null; replayOf?: string | null; replaySequence?: number | null };

/**
 * Who a delivery says it is on the wire: its own id and sequence, or a replay's original's (the
 * replay's own id goes in `hook-replay`; docs/interface.md, "Replay"). Pure.
 */
export function sentAs(delivery: Replayed): { id: string; sequence: number | null; replayId: string | null } {
  if (!delivery.replayId) return { id: delivery.id, sequence: delivery.sequence, replayId: null };
  return { id: delivery.replayOf ?? delivery.id, sequence: delivery.replaySequence ?? null, replayId: delivery.replayId };
}

/**
 * What the delivery log stores of an attempt's headers: its signatures only, their values one per
 * line in the order of SIGNATURES (an empty line for one it did not send), with no names: about 90
 * bytes an attempt where the names in JSON made it 130. Pure.
 */
export function storedHeaders(sent: Record<string, string> | null): string | null {
  if (sent === null) return null;
  return SIGNATURES.map((name) => sent[name] ?? "")
    .join("\n")
    .replace(/\n+$/, "");
}

/** The signatures from what storedHeaders kept, or from a JSON object (how rows made before it kept them). Pure. */
function storedSignatures(stored: string): Record<string, string> {
  if (stored.startsWith("{")) return JSON.parse(stored) as Record<string, string>;
  const values = stored.split("\n");
  return Object.fromEntries(SIGNATURES.flatMap((name, i) => (values[i] ? [[name, values[i]!]] : [])));
}

/**
 * The headers an attempt sent, in the order it sent them, from what was stored and what the
 * delivery and the attempt say (its id, subscription, content type, start). A row stored with every
 * header (before only the signatures were kept) is shown as stored. Pure.
 */
export function sentHeaders(
  delivery: Replayed & { subscriptionId: string; contentType: string; paymentVersion: number | null; event?: string | null },
  attempt: { startedAt: number; headers: string | null },
): Record<string, string> | null {
  if (attempt.headers === null) return null;
  const stored = storedSignatures(attempt.headers);
  if (stored.authorization !== undefined) return stored;
  const as = sentAs(delivery);
  return {
    authorization: MASKED_AUTHORIZATION,
    "content-type": delivery.contentType,
    "hook-subscription": delivery.subscriptionId,
    "hook-delivery": as.id,
    "hook-event": delivery.event ?? "payment.changed",
    ...orderHeaders({ ...as, paymentVersion: delivery.paymentVersion }),
    "user-agent": USER_AGENT,
    "hook-hmac": stored["hook-hmac"]!,
    ...(stored["hook-hmac-next"] !== undefined ? { "hook-hmac-next": stored["hook-hmac-next"] } : {}),
    "webhook-id": as.id,
    "webhook-timestamp": String(Math.floor(attempt.startedAt / 1000)),
    "webhook-signature": stored["webhook-signature"]!,
  };
}
