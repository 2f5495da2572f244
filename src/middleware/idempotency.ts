import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { AppError, conflict } from "../errors";
import { claimKey, decide, HEADER, keyProblem, MESSAGES, REPLAYED_HEADER, settle, type Claim } from "../idempotency";
import type { StoredKey } from "../idempotency/store";
import { sha256Hex } from "../lib/crypto";
import { decrypt } from "../lib/encryption";
import { newToken } from "../lib/ids";

/**
 * `Idempotency-Key` on a POST of the API (contract 9.1): the first request with a key runs, and
 * its answer is stored with the key (by the write's own batch when it writes: see idempotency/);
 * the same request again gets that answer, with `Idempotent-Replayed: true`, and runs nothing.
 * Runs after authentication (keys are the API user's) and after the body is read and checked.
 */
export const idempotency: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = c.req.header(HEADER);
  if (c.req.method !== "POST" || key === undefined) return next();
  const problem = keyProblem(key);
  if (problem) throw new AppError("validation", problem);
  const { accountId, username } = c.get("caller");
  const db = c.get("db");
  const requestHash = await sha256Hex(`POST ${normalPath(c)}\n${await c.req.text()}`);
  const claim: Claim = { accountId, username, key, token: newToken(), answeredInBatch: false };
  const row = await claimKey(db, claim, requestHash, Date.now());
  switch (decide(row, { token: claim.token, requestHash })) {
    case "mismatch":
      throw new AppError("unprocessable", MESSAGES.mismatch);
    case "in_progress":
      throw conflict(MESSAGES.inProgress);
    case "replay":
      return replay(c, row);
  }
  c.set("idempotency", claim);
  await next();
  try {
    await settle(db, claim, c.res.status, await c.res.clone().text());
  } catch (error) {
    // The answer stands; the key stays held until its lock lapses, then the same request may run again.
    console.error(JSON.stringify({ type: "idempotency_settle_failed", request_id: c.get("requestId"), error: String(error) }));
  }
};

/** The path a key is bound to, with or without its trailing slash. */
function normalPath(c: Context<AppEnv>): string {
  return new URL(c.req.url).pathname.replace(/\/+$/, "");
}

async function replay(c: Context<AppEnv>, row: StoredKey): Promise<Response> {
  const body = row.sealed ? await decrypt(c.env.ENCRYPTION_KEY, row.body!).catch(() => null) : row.body!;
  if (body === null) throw conflict(MESSAGES.unreadable);
  return c.body(body, row.status as 200, { "content-type": "application/json", [REPLAYED_HEADER]: "true" });
}
