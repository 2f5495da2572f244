/** Seconds a delivery's `webhook-timestamp` may differ from the receiver's clock (300). */
export declare const DEFAULT_TOLERANCE_SEC: number;

export type Reason =
  | "bad_input"
  | "bad_secret"
  | "missing_header"
  | "bad_timestamp"
  | "stale_timestamp"
  | "bad_credentials"
  | "unknown_signature_version"
  | "no_key_for_signature"
  | "signature_mismatch"
  | "hmac_mismatch"
  | "bad_key_set";

/** What each reason means. */
export declare const REASONS: Record<Reason, string>;

/** The request's headers: a Headers object, Node's `req.headers`, or any object of names (any case) to values. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined> | [string, string][];

/** The exact bytes received: read the raw body, never a re-serialised parse of it. */
export type BodyLike = string | Uint8Array | ArrayBuffer | ArrayBufferView;

export interface VerifyInput {
  body: BodyLike;
  headers: HeadersLike;
  /**
   * The subscription's signing secret(s), `whsec_…` (checks `v1` and `hook-hmac`), and/or its
   * Ed25519 public key(s), `whpk_…` (checks `v1a`). Pass the old and the new one during a rotation.
   */
  secrets?: string | string[];
  /**
   * An `ed25519` subscription's keys as a JWK Set (`GET /v1/webhooks/{id}/jwks/`), or a set read
   * from its URL (`keySetFrom`): checks `v1a` with the keys `webhook-key-id` names. Needs no secret.
   */
  keys?: JwkSet | KeySet;
  /** The subscription's Basic credentials: checked when either is given. */
  username?: string;
  password?: string;
  /** How far `webhook-timestamp` may be from now, in seconds (default 300; Infinity skips it). */
  toleranceSec?: number;
  /** The receiver's clock, in ms (default Date.now()). */
  now?: number;
}

/** An Ed25519 public key as a JWK (RFC 8037); `kid` is its RFC 7638 thumbprint. */
export interface Jwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  use?: "sig";
  alg?: "EdDSA";
}

export interface JwkSet {
  keys: Jwk[];
}

/** A JWK Set read from a URL and kept in memory (`keySetFrom`). */
export interface KeySet {
  url: string;
  keysFor(kids: string[]): Promise<Jwk[]>;
}

/** How often a key set from a URL is fetched again at most, for a `kid` it does not have (60 s). */
export declare const REFETCH_AFTER_MS: number;

/** A JWK Set read from `url` on first use, and again (at most once a minute) for a `kid` it lacks. */
export declare function keySetFrom(url: string, options?: { fetch?: typeof fetch; now?: () => number }): KeySet;

export type VerifyResult = { ok: true; reason: null } | { ok: false; reason: Reason; detail: string };

/** Checks one delivery. Never throws. */
export declare function verify(input: VerifyInput): Promise<VerifyResult>;

export type PaymentStatus = "pending" | "in-progress" | "settled" | "canceled" | "failed" | "refunded";

/** A `payment.changed` body: the fields its subscription's flags add, or `object` (all_payment_details). */
export interface PaymentChanged {
  object_type: "payment";
  object_id: string;
  event: "payment.changed";
  invoice_ids?: string[];
  payment_status?: PaymentStatus;
  payment_events?: { id: string; event_code: string; status: string; description: string; created: string; [key: string]: unknown }[];
  refund_reason?: string | null;
  instrument_number?: string | null;
  /** The whole payment detail (GET /v2/payments/{id}) right after the change. */
  object?: { id: string; status: PaymentStatus; version: number; [key: string]: unknown };
  /** A test delivery (POST /v1/webhooks/{id}/test/). */
  test?: boolean;
}

/** A `subscription.health` body: what happened to another subscription of the account. */
export interface SubscriptionHealth {
  object_type: "subscription";
  object_id: string;
  event: "subscription.failing" | "subscription.disabled" | "subscription.recovered" | "delivery.exhausted";
  occurred_at: string;
  [key: string]: unknown;
}

export interface Delivery {
  /** webhook-id: the delivery id, the same on every retry. */
  id: string | null;
  subscription: string | null;
  event: string;
  /** hook-sequence: the subscription's sequence number; null on a test delivery. */
  sequence: number | null;
  /** hook-payment-version: the payment's version the body shows; null on a test or health delivery. */
  paymentVersion: number | null;
  /** webhook-timestamp: when this attempt was signed (Unix seconds). */
  timestamp: number | null;
  /** traceparent and tracestate: the trace of the write that made the change (the same trace id on every attempt, a span id of its own each); null without a valid one. */
  trace: { traceId: string; spanId: string; flags: string; traceparent: string; tracestate: string | null } | null;
  test: boolean;
  contentType: string;
  data: PaymentChanged | SubscriptionHealth;
}

/** A body that is neither a JSON nor a form delivery. */
export declare class ParseError extends Error {}

/** Reads a delivery (verify it first). Throws ParseError on a body that is not one. */
export declare function parse(input: { body: BodyLike; headers: HeadersLike }): Delivery;

/** The `type` of an endpoint-ownership challenge, and its `hook-event` (`webhook.verification`). */
export declare const CHALLENGE_TYPE: string;

/** The answer to an endpoint-ownership challenge (`{ challenge }`, sent back as JSON with a 2xx), or null when the delivery is not one. Verify it first. */
export declare function challengeAnswer(input: { body: BodyLike; headers: HeadersLike }): { challenge: string } | null;
