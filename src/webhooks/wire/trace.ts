/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) across the webhook: a write's
 * `traceparent` (and `tracestate`) goes with every delivery its change makes, and each attempt
 * sends the trace id with a span id of its own. A write without a valid `traceparent` starts a
 * new trace; an invalid header is ignored, as the specification says, never an error. Pure, but
 * for the random ids.
 */
import { toHex } from "../../lib/crypto";

/** A delivery's trace: the trace id (32 hex), the flags (2 hex) and the trace state (null when none). */
export interface Trace {
  traceId: string;
  flags: string;
  state: string | null;
}

/** The longest `tracestate` kept (the specification asks vendors to pass on at least 512 characters). */
export const TRACESTATE_MAX_CHARS = 512;
const TRACESTATE_MAX_MEMBERS = 32;

const HEX = (n: number) => `[0-9a-f]{${n}}`;
const TRACEPARENT = new RegExp(`^(${HEX(2)})-(${HEX(32)})-(${HEX(16)})-(${HEX(2)})(-.*)?$`);
const ZEROS = /^0+$/;
// A list member: `key=value`, the key simple or `tenant@system` (the specification's list-member grammar).
const MEMBER =
  /^(?:[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * The trace id and flags of a `traceparent`, or null when it is not valid: version `ff`, ids of
 * zeros, upper-case hex, version 00 with anything after the flags. A later version is read by its
 * first four fields, as the specification says. Pure.
 */
export function parseTraceparent(header: string | undefined | null): { traceId: string; flags: string } | null {
  if (!header || header.length > TRACESTATE_MAX_CHARS) return null;
  const match = TRACEPARENT.exec(header.trim());
  if (!match) return null;
  const [, version, traceId, parentId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  if (version === "ff" || (version === "00" && rest !== undefined)) return null;
  if (ZEROS.test(traceId) || ZEROS.test(parentId)) return null;
  return { traceId, flags };
}

/** A `tracestate` worth passing on, or null: at most 32 well-formed members and 512 characters. Pure. */
export function parseTracestate(header: string | undefined | null): string | null {
  if (!header || header.length > TRACESTATE_MAX_CHARS) return null;
  const members = header
    .split(",")
    .map((member) => member.trim())
    .filter((member) => member !== "");
  if (members.length === 0 || members.length > TRACESTATE_MAX_MEMBERS || !members.every((member) => MEMBER.test(member))) return null;
  return members.join(",");
}

/** A write's trace: the one its headers carry, or a new one (sampled: its id is logged). */
export function traceOf(traceparent: string | undefined | null, tracestate: string | undefined | null): Trace {
  const parent = parseTraceparent(traceparent);
  if (!parent) return newTrace();
  return { ...parent, state: parseTracestate(tracestate) };
}

/** A new trace, for a change whose write carried none (and for test and health deliveries). */
export function newTrace(): Trace {
  return { traceId: randomHex(16), flags: "01", state: null };
}

/** A delivery row's trace; null on rows made before traces were kept. */
export function traceOfRow(row: { traceId: string | null; traceFlags: string | null; traceState: string | null }): Trace | null {
  return row.traceId === null ? null : { traceId: row.traceId, flags: row.traceFlags ?? "01", state: row.traceState };
}

/** The trace headers of one attempt: the delivery's trace id and flags with a new span id, and its trace state. */
export function attemptTraceHeaders(trace: Trace | null): Record<string, string> {
  if (!trace) return {};
  return { traceparent: `00-${trace.traceId}-${randomHex(8)}-${trace.flags}`, ...(trace.state ? { tracestate: trace.state } : {}) };
}

function randomHex(bytes: number): string {
  let id = toHex(crypto.getRandomValues(new Uint8Array(bytes)));
  // An id of zeros is invalid; 1 in 2^64 at worst, made valid rather than drawn again.
  if (ZEROS.test(id)) id = `${id.slice(0, -1)}1`;
  return id;
}
