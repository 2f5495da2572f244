// The service as the command line sees it: JSON calls with an API user's Basic credentials, and
// every failure turned into one line a person can act on.

/** A failure the command line reports in one line and exits on (or, while listening, waits out). */
export class CliError extends Error {
  /** `retry`: the service or the local target may come back (down, restarting, asleep). */
  constructor(message, { retry = false } = {}) {
    super(message);
    this.name = "CliError";
    this.retry = retry;
  }
}

function basic(username, password) {
  return `Basic ${Buffer.from(`${username}:${password}`, "utf8").toString("base64")}`;
}

/** Why a fetch threw, in a person's words: refused, unknown host, timed out. */
export function networkReason(error) {
  const cause = error?.cause ?? error;
  const code = cause?.code ?? cause?.name ?? "";
  if (code === "ECONNREFUSED") return "connection refused: nothing is listening there";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "the host name does not resolve";
  if (code === "TimeoutError" || code === "AbortError" || code === "UND_ERR_HEADERS_TIMEOUT") return "no answer in time";
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET") return "the connection was dropped";
  return String(cause?.message ?? error);
}

/** A promise that rejects when `signal` aborts (and never otherwise); its rejection is always handled. */
function stopped(signal) {
  const promise = new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
  promise.catch(() => {});
  return promise;
}

/** How long a call may take before it is given up as lost (a connection that died while the laptop slept). */
export const CALL_TIMEOUT_MS = 15_000;

/**
 * The newer of two `Payments-Bookmark`s (`b1.<shard>.<D1 bookmark>.<tag>`): on one shard the
 * greater D1 bookmark (they sort oldest to newest as text), across shards the one that came last.
 */
export function newerBookmark(held, came) {
  if (held === null) return came;
  const [, heldShard, heldAt] = held.split(".");
  const [, cameShard, cameAt] = came.split(".");
  return heldShard === cameShard && (heldAt ?? "") > (cameAt ?? "") ? held : came;
}

/**
 * A client for the service at `url` as `username`. Each call sends back the newest
 * `Payments-Bookmark` an answer gave, so a command reads what it wrote even from a read replica.
 */
export function serviceClient({ url, username, password }) {
  const base = url.replace(/\/+$/, "");
  let bookmark = null;
  async function request(method, path, { body, signal, idempotencyKey, timeoutMs = CALL_TIMEOUT_MS } = {}) {
    let response;
    let text;
    const deadline = AbortSignal.timeout(timeoutMs);
    const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        signal: stop,
        headers: {
          authorization: basic(username, password),
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          // A POST that makes something carries a key (a retry is answered once); `idempotencyKey: null`
          // sends none, for calls that are safe to repeat as they are (an ack only moves forward).
          ...(method === "POST" && idempotencyKey !== null ? { "idempotency-key": idempotencyKey ?? crypto.randomUUID() } : {}),
          ...(bookmark === null ? {} : { "payments-bookmark": bookmark }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      // The body, or the stop: a body read that a stop cut short could otherwise stay unsettled
      // with nothing left to run, and Node would end the listener with exit code 13.
      text = await Promise.race([response.text(), stopped(stop)]);
    } catch (error) {
      if (signal?.aborted) throw error;
      if (deadline.aborted)
        throw new CliError(`The service at ${base} did not answer ${method} ${path.split("?")[0]} in ${timeoutMs / 1000} s (asleep, or the network changed).`, {
          retry: true,
        });
      throw new CliError(`Cannot reach the service at ${base} (${networkReason(error)}). Is it running? (npm start)`, { retry: true });
    }
    const came = response.headers.get("payments-bookmark");
    if (came) bookmark = newerBookmark(bookmark, came);
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    if (response.status === 401)
      throw new CliError(
        `The service at ${base} refused the credentials of "${username}" (401): check PAYMENTS_API_USERNAME and PAYMENTS_API_PASSWORD (or --username, --password).`,
      );
    if (response.status >= 500)
      throw new CliError(`The service at ${base} answered ${response.status} to ${method} ${path}: ${json?.detail ?? text.slice(0, 200)}`, { retry: true });
    return { status: response.status, json, headers: response.headers };
  }
  return { base, request };
}

/** `detail`, or the field errors, of an error answer, in one line. */
export function errorText(json) {
  if (!json || typeof json !== "object") return "no details";
  if (typeof json.detail === "string") return json.detail;
  return Object.entries(json)
    .map(([field, messages]) => `${field}: ${[].concat(messages).join(" ")}`)
    .join("; ");
}
