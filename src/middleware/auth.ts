import type { Context, MiddlewareHandler } from "hono";
import { runBatch } from "../db/client";
import { countFailure, failureKey, readFailures, throttledFor, type FailureRow } from "../services/auth-throttle";
import type { AppEnv } from "../app-env";
import { AppError, forbidden } from "../errors";
import { constantTimeEqual, fromBase64 } from "../lib/crypto";
import { requestSession } from "../db/session";
import { sessionConstraint } from "../lib/bookmark";
import { answerBookmark, sentBookmark } from "./bookmark";
import { requireShard } from "../db/shards";
import { authenticate } from "../services/api-users";

const CHALLENGE = { "WWW-Authenticate": 'Basic realm="payments"' };

function unauthorized(detail: string): AppError {
  return new AppError("unauthorized", detail, undefined, CHALLENGE);
}

/** Reads `Basic base64(username:password)`; null for anything malformed. */
export function parseBasic(header: string | undefined): { username: string; password: string } | null {
  const match = header ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!match) return null;
  let decoded: string;
  try {
    decoded = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(fromBase64(match[1]!));
  } catch {
    return null;
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * API users: HTTP Basic with a generated password, checked in the directory. The one routing
 * point: from here on the request's `db` is its account's shard, and no verb reaches another. The
 * shard's session honours the `Payments-Bookmark` the client sent, and the answer carries the new one.
 */
export const basicAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const header = c.req.header("authorization");
  if (!header) throw unauthorized("Authentication credentials were not provided.");
  const credentials = parseBasic(header);
  if (!credentials) throw unauthorized("Invalid basic header.");
  const checked = await authenticate(c.get("directory"), credentials.username, credentials.password, clientAddress(c));
  if (!checked.caller) {
    if (checked.throttledFor !== null) throw throttled(checked.throttledFor);
    throw unauthorized("Invalid username/password.");
  }
  const caller = checked.caller;
  c.set("caller", caller);
  await throttle(c.env, caller.username);
  const sent = await sentBookmark(c, caller);
  const session = requestSession(requireShard(c.env, caller.shard), sessionConstraint(c.req.method, caller.shard, sent), c.get("d1Tally"));
  c.set("shardSession", session);
  c.set("db", session.db);
  await next();
  await answerBookmark(c, caller, c.get("shardSession"), sent);
};

/** The rate limit's period, in seconds: wrangler.toml's `[[ratelimits]]` `period`. */
export const RATE_LIMIT_PERIOD_S = 10;

/**
 * Each API user's requests pass Cloudflare's rate limiting binding (a limit per period, counted
 * per location); over it, 429 with Retry-After, worded as Django REST framework's throttles.
 */
async function throttle(env: AppEnv["Bindings"], username: string): Promise<void> {
  if (!env.API_RATE_LIMIT || env.RATE_LIMITING === "off") return;
  const { success } = await env.API_RATE_LIMIT.limit({ key: username });
  if (!success) throw throttled(RATE_LIMIT_PERIOD_S);
}

/** 429 worded as Django REST framework's throttles, with Retry-After. */
function throttled(seconds: number): AppError {
  return new AppError("throttled", `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? "" : "s"}.`, undefined, {
    "Retry-After": String(seconds),
  });
}

/** The client's address as Cloudflare gives it; null where there is none (tests, some local runs). */
function clientAddress(c: Context<AppEnv>): string | null {
  return c.req.header("cf-connecting-ip") ?? null;
}

/** Operators: `Bearer ADMIN_TOKEN`. Without a configured token the admin API is off. */
export const adminAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = c.env.ADMIN_TOKEN;
  if (!token) throw forbidden("The admin API is disabled: ADMIN_TOKEN is not set.");
  const db = c.get("directory");
  const keys = [failureKey("admin", clientAddress(c) ?? "any")];
  const now = Date.now();
  const wait = throttledFor((await runBatch(db, readFailures(db, keys))).flat() as FailureRow[], now);
  if (wait !== null) throw throttled(wait);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "");
  if (!match || !constantTimeEqual(match[1]!, token)) {
    await countFailure(db, keys, now);
    throw new AppError("unauthorized", "Invalid or missing admin token.", undefined, { "WWW-Authenticate": 'Bearer realm="admin"' });
  }
  return next();
};
