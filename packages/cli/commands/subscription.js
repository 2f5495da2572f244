// What `listen` needs of the subscription it serves, and the lines it prints as it goes.
import { CliError, errorText } from "../api.js";
import { keySetFrom } from "../../verify/index.js";

/** Checks what every `listen` needs before it calls the service: a subscription, and a URL to forward to. */
export function checkListenArgs({ subscription, forwardTo }) {
  if (!subscription) throw new CliError("listen needs --subscription <id> (GET /v1/webhooks/ lists them).");
  if (!forwardTo) throw new CliError("listen needs --forward-to <url>, e.g. --forward-to http://127.0.0.1:4000/webhooks");
  try {
    new URL(forwardTo);
  } catch {
    throw new CliError(`--forward-to is not a URL: ${forwardTo}`);
  }
}

/** The subscription `id` as its API user reads it, or a CliError that says what to check. */
export async function findSubscription(service, id) {
  const found = await service.request("GET", `/v1/webhooks/${encodeURIComponent(id)}/`);
  if (found.status === 404) throw new CliError(`No subscription ${id} for this API user (404): check the id (GET /v1/webhooks/ lists yours).`);
  if (found.status !== 200) throw new CliError(`The service answered ${found.status} for subscription ${id}: ${errorText(found.json)}`);
  return found.json;
}

/** An Ed25519 subscription's published keys (its JWK Set, fetched on first use), or null for an `hmac` one. */
export function publishedKeys(service, subscription) {
  return subscription.signing === "ed25519" ? keySetFrom(`${service.base}/v1/webhooks/${encodeURIComponent(subscription.id)}/jwks/`) : null;
}

/** A progress line that rewrites itself on a terminal, and plain lines otherwise. */
export function statusLine(out) {
  const tty = Boolean(out.isTTY);
  let shown = false;
  const clear = () => {
    if (tty && shown) out.write("\r\x1b[2K");
    shown = false;
  };
  return {
    note(text) {
      clear();
      out.write(`${new Date().toISOString().slice(11, 19)} ${text}\n`);
    },
    show(text) {
      if (!tty) return;
      clear();
      out.write(`… ${text}`);
      shown = true;
    },
  };
}
