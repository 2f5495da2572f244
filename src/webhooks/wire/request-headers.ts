import type { WebhookContentType } from "../../db/schema";
import { basicAuthorization } from "../../lib/crypto";
import { orderHeaders, USER_AGENT } from "./sent-headers";
import { signatureHeaders, type SigningSecrets } from "./signing";
import { attemptTraceHeaders, type Trace } from "./trace";

/** One delivery as it goes out: what its headers are made of. */
export interface OutgoingDelivery {
  body: string;
  contentType: WebhookContentType;
  deliveryId: string;
  subscriptionId: string;
  /** What it tells: `payment.changed`, or an operational event's name (health.ts). */
  event: string;
  /** The subscription's sequence number and the payment's version; null on a test delivery. */
  sequence: number | null;
  paymentVersion: number | null;
  username: string;
  password: string;
  secrets: SigningSecrets;
  /** The write's trace (trace.ts); null on deliveries made before traces were kept. */
  trace: Trace | null;
  /** The replay that sends it again (`hook-replay`), or null. */
  replayId?: string | null;
}

/** Every header of a delivery signed at `timestamp` (Unix seconds), in the order they are sent; authorization unmasked. */
export async function requestHeaders(delivery: OutgoingDelivery, timestamp: number): Promise<Record<string, string>> {
  return {
    authorization: basicAuthorization(delivery.username, delivery.password),
    "content-type": delivery.contentType,
    "hook-subscription": delivery.subscriptionId,
    "hook-delivery": delivery.deliveryId,
    "hook-event": delivery.event,
    ...orderHeaders(delivery),
    "user-agent": USER_AGENT,
    ...attemptTraceHeaders(delivery.trace),
    ...(await signatureHeaders(delivery.secrets, delivery.deliveryId, timestamp, delivery.body)),
  };
}
