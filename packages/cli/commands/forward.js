// How `listen` hands a delivery to the local URL: the body and headers it would be pushed with.
import { CliError, networkReason } from "../api.js";

/** A local URL is given as long as a receiver is (the service gives a receiver 15 s). */
const FORWARD_TIMEOUT_MS = 15_000;

/** Forwards one delivery; answers the status, or throws a CliError that says why it did not arrive. */
export async function forward(target, item) {
  let response;
  try {
    response = await fetch(target, {
      method: "POST",
      headers: item.headers,
      body: item.body,
      redirect: "manual",
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
  } catch (error) {
    throw new CliError(`Cannot deliver to ${target} (${networkReason(error)}). Is your local server running?`, { retry: true });
  }
  await response.arrayBuffer().catch(() => null);
  return response.status;
}
