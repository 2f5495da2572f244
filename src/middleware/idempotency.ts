import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { AppError } from "../errors";
import { decisionOf, HEADER, keyProblem, MESSAGES, REPLAYED_HEADER, settle, type KeyDecision, type RequestKey } from "../idempotency";
import { sha256Hex } from "../lib/crypto";
import { decrypt } from "../lib/encryption";
import { newToken } from "../lib/ids";

/**
 * `Idempotency-Key` on a POST of the API (docs/interface.md, "Safe retries"), at the edge: reads
 * the key and the request it came with (method, path and body, hashed) into `key`, a value the
 * routes hand to their verbs (routes/common.ts `keyed`). A verb's own batch claims the key and
 * stores a 2xx answer with its write (idempotency/keyed.ts). What no batch stored, this settles
 * after the route answered: a 4xx is stored with the key (claiming it first, for a request that
 * answered before reaching a verb, as a 400 on its body does), anything else lets the key go; a
 * key that another request holds answers as it says instead.
 */
export const idempotency: MiddlewareHandler<AppEnv> = async (c, next) => {
  const header = c.req.header(HEADER);
  if (c.req.method !== "POST" || header === undefined) return next();
  const problem = keyProblem(header);
  if (problem) throw new AppError("validation", problem);
  const { accountId, username } = c.get("caller");
  const requestHash = await sha256Hex(`POST ${normalPath(c)}\n${await c.req.text()}`);
  const key: RequestKey = { accountId, username, key: header, token: newToken(), requestHash };
  c.set("key", key);
  await next();
  // A 2xx was stored by its route's batch, and a replay is the stored answer itself.
  if (c.res.status < 300 || c.res.headers.has(REPLAYED_HEADER)) return;
  try {
    const decided = decisionOf(key, await settle(c.get("db"), key, c.res.status, await c.res.clone().text()));
    if (decided) c.res = await keyDecidedAnswer(c, decided);
  } catch (error) {
    // The answer stands; the key stays held until its lock lapses, then the same request may run again.
    console.error(JSON.stringify({ type: "idempotency_settle_failed", request_id: c.get("requestId"), error: String(error) }));
  }
};

/** The answer to a request whose key was decided otherwise: the stored answer replayed, a 422 or a 409. */
export async function keyDecidedAnswer(c: Context<AppEnv>, decided: KeyDecision): Promise<Response> {
  switch (decided.decision) {
    case "mismatch":
      return c.json({ detail: MESSAGES.mismatch }, 422);
    case "in_progress":
      return c.json({ detail: MESSAGES.inProgress }, 409);
    case "replay": {
      const { row } = decided;
      const body = row.sealed ? await decrypt(c.env.ENCRYPTION_KEY, row.body!).catch(() => null) : row.body!;
      if (body === null) return c.json({ detail: MESSAGES.unreadable }, 409);
      return c.body(body, row.status as 200, { "content-type": "application/json", [REPLAYED_HEADER]: "true" });
    }
  }
}

/** The path a key is bound to, with or without its trailing slash. */
function normalPath(c: Context<AppEnv>): string {
  return new URL(c.req.url).pathname.replace(/\/+$/, "");
}
