import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { AppError } from "../errors";
import { claimStatements, decide, HEADER, isKeyLost, ownStatement, keyProblem, MESSAGES, REPLAYED_HEADER, settle, storable, storedKey, type Claim, type Decision, type StoredKey } from "../idempotency";
import type { Lead } from "../db/leading-d1";
import { sha256Hex } from "../lib/crypto";
import { decrypt } from "../lib/encryption";
import { newToken } from "../lib/ids";

/**
 * `Idempotency-Key` on a POST of the API (docs/interface.md): the first request with a key runs,
 * and its answer is stored with the key (by the write's own batch when it writes: see
 * idempotency/); the same request again gets that answer, with `Idempotent-Replayed: true`, and
 * runs nothing. Runs after authentication (keys are the API user's) and after the body is read
 * and checked.
 *
 * The claim costs no round trip of its own: its statements go in front of the request's first
 * round trip to the shard (db/leading-d1.ts), and the request stops there (`KeyDecided`) when the
 * key is not its own; a first round trip that writes fails whole then, and the key's row is read
 * to say why. A request that answers before reading anything (a 400 on its body) claims after,
 * and then answers as the key says.
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
  const prepared = (d1: D1Database, queries: readonly { toSQL(): { sql: string; params: unknown[] } }[]) =>
    queries.map((query) => {
      const { sql, params } = query.toSQL();
      return d1.prepare(sql).bind(...params);
    });
  const lead: Lead = {
    statements: (d1) => prepared(d1, claimStatements(db, claim, requestHash, Date.now())),
    guarded: (d1) => prepared(d1, [...claimStatements(db, claim, requestHash, Date.now()).slice(0, -1), ownStatement(db, claim)]),
    refused: isKeyLost,
    settle: (results) => {
      const row = storedKey(results.at(-1)!);
      const decision = decide(row, { token: claim.token, requestHash });
      if (decision !== "run") throw new KeyDecided(decision, row);
    },
  };
  const led = c.get("shardSession").leading(lead);
  c.set("db", led.db);
  c.set("idempotency", claim);
  await next();
  if (keyDecidedIn(c.error)) return; // answered by keyDecidedAnswer (app.ts)
  if (!led.sent()) {
    if (!storable(c.res.status)) return; // nothing claimed, nothing to let go
    try {
      await led.send();
    } catch (error) {
      if (!(error instanceof KeyDecided)) throw error;
      c.res = await keyDecidedAnswer(c, error);
      return;
    }
  }
  try {
    await settle(led.db, claim, c.res.status, await c.res.clone().text());
  } catch (error) {
    // The answer stands; the key stays held until its lock lapses, then the same request may run again.
    console.error(JSON.stringify({ type: "idempotency_settle_failed", request_id: c.get("requestId"), error: String(error) }));
  }
};

/** The key was not this request's to run: what its row says the request gets instead. */
export class KeyDecided extends Error {
  constructor(
    readonly decision: Exclude<Decision, "run">,
    readonly row: StoredKey,
  ) {
    super(`Idempotency-Key: ${decision}`);
  }
}

/** The KeyDecided that stopped a request, though a query builder wrapped it (drizzle's "Failed query" keeps it as `cause`). */
export function keyDecidedIn(error: unknown): KeyDecided | null {
  for (let at = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) if (at instanceof KeyDecided) return at;
  return null;
}

/** The answer to a request whose key was decided otherwise: the stored answer replayed, a 422 or a 409. */
export async function keyDecidedAnswer(c: Context<AppEnv>, decided: KeyDecided): Promise<Response> {
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
