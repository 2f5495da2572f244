import { redacted, secretForms } from "./redact";
import { MASKED_AUTHORIZATION } from "../wire/sent-headers";
import { ATTEMPT_TIMEOUT_MS } from "../wire/retry-schedule";
import { requestHeaders, type OutgoingDelivery } from "../wire/request-headers";

const EXCERPT_CHARS = 500;
const EXCERPT_BYTES = 500;

/**
 * The log's excerpt of an answer: its first 500 characters, or fewer whole characters when those
 * take more than 500 bytes of UTF-8, so that a delivery row with its first attempt stays well
 * inside one page of its WITHOUT ROWID table (a longer row spills into an overflow page of its
 * own). Pure.
 */
export function excerptOf(text: string): string {
  const chars = text.slice(0, EXCERPT_CHARS);
  const encoder = new TextEncoder();
  if (encoder.encode(chars).length <= EXCERPT_BYTES) return chars;
  let bytes = 0;
  let end = 0;
  for (const char of chars) {
    bytes += encoder.encode(char).length;
    if (bytes > EXCERPT_BYTES) break;
    end += char.length;
  }
  return chars.slice(0, end);
}
/**
 * How much of a receiver's answer is read: enough for the excerpt and the secrets it must not
 * show, then the rest is cancelled, so an answer of any size costs the isolate this much.
 */
export const ANSWER_READ_BYTES = 4096;

export interface AttemptRequest extends OutgoingDelivery {
  url: string;
}

export interface AttemptResult {
  startedAt: number;
  durationMs: number;
  responseStatus: number | null;
  /** No answer within ATTEMPT_TIMEOUT_MS. */
  timedOut: boolean;
  error: string | null;
  excerpt: string | null;
  retryAfter: string | null;
  /** The request headers sent, its authorization masked; null when nothing was sent. */
  headers: Record<string, string> | null;
}

/** One signed POST with the 15 s limit. Never throws: a failure is in the result. */
export async function attemptDelivery(request: AttemptRequest, fetcher: typeof fetch = fetch): Promise<AttemptResult> {
  const startedAt = Date.now();
  const timestamp = Math.floor(startedAt / 1000);
  const started = performance.now();
  let sent: Record<string, string> | null = null;
  try {
    const headers = await requestHeaders(request, timestamp);
    sent = { ...headers, authorization: MASKED_AUTHORIZATION };
    const response = await fetcher(request.url, {
      method: "POST",
      headers,
      body: request.body,
      redirect: "manual",
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    const text = await answerStart(response.body);
    return {
      startedAt,
      durationMs: elapsed(started, startedAt),
      responseStatus: response.status,
      timedOut: false,
      error: response.ok ? null : `HTTP ${response.status}`,
      excerpt: excerptOf(redacted(text, secretsOf(request))),
      retryAfter: response.headers.get("retry-after"),
      headers: sent,
    };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    return {
      startedAt,
      durationMs: elapsed(started, startedAt),
      responseStatus: null,
      timedOut,
      error: timedOut
        ? `Timed out after ${ATTEMPT_TIMEOUT_MS / 1000} s`
        : `Network error: ${redacted(String((error as Error)?.message ?? error), secretsOf(request))}`,
      excerpt: null,
      retryAfter: null,
      headers: sent,
    };
  }
}

/** The first ANSWER_READ_BYTES of an answer as text; the rest is never read. Never throws. */
export async function answerStart(body: ReadableStream<Uint8Array> | null, limit = ANSWER_READ_BYTES): Promise<string> {
  if (!body) return "";
  const reader = body.getReader();
  const bytes = new Uint8Array(limit);
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      const taken = value.subarray(0, limit - size);
      bytes.set(taken, size);
      size += taken.byteLength;
    }
  } catch {
    // An answer cut off or timed out mid-body keeps what arrived.
  }
  reader.cancel().catch(() => {});
  return new TextDecoder().decode(bytes.subarray(0, size));
}

/** What a receiver's answer or a network error must not carry into the delivery log. */
function secretsOf(request: AttemptRequest): string[] {
  const { current, previous, ed25519 } = request.secrets;
  return secretForms({
    username: request.username,
    password: request.password,
    secrets: [current, previous, ed25519?.current ?? null, ed25519?.previous ?? null],
  });
}

/** Workers freeze performance.now() between I/O; Date.now() moves on I/O; take the larger. */
function elapsed(started: number, startedAt: number): number {
  return Math.max(Math.round(performance.now() - started), Date.now() - startedAt);
}
