// `listen`: reads a subscription's feed from its acked position and POSTs each delivery, with the
// headers it would be pushed with (signed as it is read), to a local URL; acks each one after the
// local URL answered 2xx. The position lives in the service, so a listener that is stopped, killed
// or put to sleep goes on where it left off: nothing is skipped, and a delivery is forwarded again
// only if the listener died between its 2xx and its ack.
import { CliError, errorText } from "../api.js";
import { forward } from "./forward.js";
import { verify } from "../../verify/index.js";
import { checkListenArgs, findSubscription, publishedKeys, statusLine } from "./subscription.js";

const WAIT_SEC = 20;
const MAX_BACKOFF_MS = 30_000;

/** The next wait after a failure: doubling from 1 s up to 30 s. Pure. */
export function backoff(previousMs) {
  return previousMs === 0 ? 1000 : Math.min(previousMs * 2, MAX_BACKOFF_MS);
}

export async function listen(service, { subscription, forwardTo, limit = 100, out = process.stdout, signal, feedTimeoutMs = (WAIT_SEC + 15) * 1000 }) {
  checkListenArgs({ subscription, forwardTo });
  const found = await findSubscription(service, subscription);
  // An Ed25519 subscription's deliveries are checked with its published keys before they are forwarded.
  const keys = publishedKeys(service, found);
  const status = statusLine(out);
  status.note(
    `Listening to ${subscription} (${found.url}); forwarding to ${forwardTo}${keys ? `, each checked with the keys at ${keys.url}` : ""}. Ctrl-C stops after the delivery in hand.`,
  );
  let forwarded = 0;
  let waitMs = 0;
  while (!signal?.aborted) {
    try {
      status.show(`waiting for deliveries… ${forwarded} forwarded`);
      const path = `/v1/webhooks/${encodeURIComponent(subscription)}/feed/?after=acked&signed=true&limit=${limit}&wait=${WAIT_SEC}`;
      let page;
      try {
        // A long poll answers within WAIT_SEC; one that does not is a connection lost to sleep: read again.
        page = await service.request("GET", path, { signal, timeoutMs: feedTimeoutMs });
      } catch (error) {
        if (signal?.aborted) break;
        throw error;
      }
      if (page.status === 410)
        throw new CliError(
          `The feed's kept position expired (410): ${errorText(page.json)} Resynchronise by polling /v2/payments/, then ack a fresh position (POST /v1/webhooks/${subscription}/feed/ack/).`,
        );
      if (page.status === 404) throw new CliError(`Subscription ${subscription} is gone (404).`);
      if (page.status !== 200) throw new CliError(`The feed answered ${page.status}: ${errorText(page.json)}`);
      for (const item of page.json.results) {
        const started = Date.now();
        if (keys) {
          const check = await verify({ body: item.body, headers: item.headers, keys });
          if (!check.ok) throw new CliError(`Delivery #${item.sequence} (${item.delivery_id}) does not verify with the published keys: ${check.detail}`);
        }
        const answer = await forward(forwardTo, item);
        if (answer < 200 || answer > 299)
          throw new CliError(`${forwardTo} answered ${answer} to delivery #${item.sequence} (${item.delivery_id}); it is not acked and will be sent again.`, {
            retry: true,
          });
        const acked = await service.request("POST", `/v1/webhooks/${encodeURIComponent(subscription)}/feed/ack/`, {
          body: { cursor: item.cursor },
          idempotencyKey: null,
        });
        if (acked.status !== 200)
          throw new CliError(`The service did not keep the position after #${item.sequence} (${acked.status}): ${errorText(acked.json)}`, {
            retry: acked.status >= 500,
          });
        forwarded += 1;
        status.note(`#${item.sequence} ${item.headers["hook-event"]} ${item.payment_id || ""} -> ${answer} (${Date.now() - started} ms)`.replace("  ", " "));
        if (signal?.aborted) break;
      }
      waitMs = 0;
    } catch (error) {
      if (!(error instanceof CliError) || !error.retry) throw error;
      waitMs = backoff(waitMs);
      status.note(`${error.message} Trying again in ${waitMs / 1000} s.`);
      await sleep(waitMs, signal);
    }
  }
  status.note(`Stopped: ${forwarded} forwarded this run; the position is kept in the service.`);
  return forwarded;
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}
