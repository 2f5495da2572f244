import { inject } from "vitest";
import { call, unique, type User } from "./api";

export const receiverUrl = () => inject("receiverUrl");

export interface Box {
  path: string;
  url: string;
}

/** A fresh path on the receiver, with what it verifies against and the statuses it answers. */
export async function mailbox(
  config: {
    secret?: string;
    publicKey?: string;
    username: string;
    password: string;
    responses?: number[];
    delayMs?: number;
    failing?: string;
    echo?: "none" | "wrong";
  },
  path = `/hooks/${unique("box")}`,
): Promise<Box> {
  const res = await fetch(`${receiverUrl()}/_config${path}`, { method: "POST", body: JSON.stringify(config) });
  if (!res.ok) throw new Error(`receiver config: ${res.status}`);
  return { path, url: `${receiverUrl()}${path}` };
}

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  verified: { basic: boolean; hmac: boolean; standard: boolean; kit: boolean } | null;
  received_at: number;
  /** The status the receiver answered, and when (null until it has). */
  status: number;
  answered_at: number | null;
}

export async function receivedAt(box: Box): Promise<Received[]> {
  const res = await fetch(`${receiverUrl()}/_received${box.path}`);
  return res.json();
}

export async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline) throw new Error(`waitFor timed out; last value: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

export const HOOK_USER = { username: "hook-user", password: "hook-pass-123" };

/** Subscribes `user` to a new receiver mailbox; returns the record and the mailbox. */
export async function subscribeToReceiver(user: User, fields: Record<string, unknown> = {}, responses?: number[]) {
  const path = `/hooks/${unique("box")}`;
  const res = await call("POST", "/v1/webhooks/", {
    body: { event: "payment.changed", url: `${receiverUrl()}${path}`, content_type: "application/json", ...HOOK_USER, ...fields },
    headers: user.headers,
  });
  if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${JSON.stringify(res.json)}`);
  const box = await mailbox({ secret: res.json.secret, publicKey: res.json.public_key ?? undefined, ...HOOK_USER, responses }, path);
  return { subscription: res.json, box };
}

/**
 * Sends the subscription's newest delivery once more and waits for it to arrive: a second
 * attempt, which webhook_attempts keeps (a delivery's first attempt is kept on its row).
 */
export async function secondAttempt(user: User, subscriptionId: string, box: Box): Promise<void> {
  const before = (await receivedAt(box)).length;
  const log = await call("GET", `/v1/webhooks/${subscriptionId}/deliveries/?page_size=1`, { headers: user.headers });
  const [newest] = log.json.results as { id: string }[];
  const res = await call("POST", `/v1/webhooks/${subscriptionId}/deliveries/${newest!.id}/redeliver/`, { headers: user.headers });
  if (res.status !== 202) throw new Error(`redeliver: ${res.status} ${JSON.stringify(res.json)}`);
  await waitFor(
    () => receivedAt(box),
    (got) => got.length === before + 1,
  );
  await waitFor(
    () => call("GET", `/v1/webhooks/${subscriptionId}/deliveries/${newest!.id}/`, { headers: user.headers }),
    (one) => one.json.attempts.length === 2 && one.json.status === "succeeded",
  );
}

/** Subscribes `user` to a URL nothing answers (tests that mock the receiver's answers); returns the record. */
export async function subscribeUnanswered(user: User, event = "payment.changed"): Promise<{ id: string; event: string }> {
  const res = await call("POST", "/v1/webhooks/", {
    body: { event, url: "http://127.0.0.1:9/hooks", content_type: "application/json", ...HOOK_USER },
    headers: user.headers,
  });
  if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

/**
 * Waits until every delivery of the subscriptions has ended or is held: none is pending, so the
 * consumer sends none of them again (a succeeded delivery is never sent twice). What a receiver
 * got is then final, where a fixed sleep would only guess.
 */
export async function allEnded(user: User, subscriptionIds: string[]): Promise<void> {
  for (const id of subscriptionIds) {
    await waitFor(
      () => call("GET", `/v1/webhooks/${id}/deliveries/?status=pending&page_size=1`, { headers: user.headers }),
      (res) => res.status === 200 && res.json.count === 0,
    );
  }
}
