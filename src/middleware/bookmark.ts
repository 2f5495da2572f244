import type { Context, MiddlewareHandler } from "hono";
import { requireShard } from "../db/shards";
import { requestSession, type RequestSession } from "../db/session";
import type { AppEnv } from "../app-env";
import { AppError } from "../errors";
import { BOOKMARK_HEADER, BOOKMARK_MESSAGES, carriable, issueBookmark, parseBookmark, readBookmark, type Bookmark } from "../lib/bookmark";
import type { Caller } from "../context";

/**
 * The bookmark a request sent (lib/bookmark.ts): null when none, "unverifiable" when this Worker
 * cannot check it (no ENCRYPTION_KEY, or signed with a key the list no longer has). A malformed
 * one, or one not given to the caller's account, is a 400 before any shard is read.
 */
export async function sentBookmark(c: Context<AppEnv>, caller: Caller): Promise<Bookmark | "unverifiable" | null> {
  const text = c.req.header(BOOKMARK_HEADER);
  if (text === undefined) return null;
  const keys = c.env.ENCRYPTION_KEY;
  if (!keys) {
    if (!parseBookmark(text.trim())) throw new AppError("validation", BOOKMARK_MESSAGES.malformed);
    return "unverifiable";
  }
  const read = await readBookmark(keys, caller.accountId, text);
  if (read === "malformed" || read === "foreign") throw new AppError("validation", BOOKMARK_MESSAGES[read]);
  return read;
}

/**
 * Puts on the answer the bookmark of what the request's shard session read or wrote; when it ran
 * no query, the bookmark the client sent for this shard, unchanged. Nothing without ENCRYPTION_KEY.
 */
export async function answerBookmark(c: Context<AppEnv>, caller: Caller, session: RequestSession, sent: Bookmark | "unverifiable" | null): Promise<void> {
  const keys = c.env.ENCRYPTION_KEY;
  if (!keys) return;
  const d1 = session.bookmark();
  const reached = carriable(d1) ? d1 : sent && sent !== "unverifiable" && sent.shard === caller.shard ? sent.d1 : null;
  if (reached === null) return;
  c.res.headers.set(BOOKMARK_HEADER, await issueBookmark(keys, caller.accountId, { shard: caller.shard, d1: reached }));
}

/**
 * For a route that must read its shard's primary (the feed: a cursor it handed out must never look
 * past the end on a replica behind the primary), put on the route itself: the request's shard
 * session starts at the primary instead, before the route reads anything.
 */
export const fromPrimary: MiddlewareHandler<AppEnv> = async (c, next) => {
  const session = requestSession(requireShard(c.env, c.get("caller").shard), "first-primary", c.get("d1Tally"));
  c.set("shardSession", session);
  c.set("db", session.db);
  await next();
};
