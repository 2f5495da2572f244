import { base64url, constantTimeEqual } from "./crypto";
import { macKeys } from "./encryption";

/**
 * `Payments-Bookmark` (docs/interface.md, "Read replicas"): what an answer read or wrote, as D1's
 * Sessions API names it, so that a later request that sends it back reads a state at least that
 * new.
 *
 * A bookmark is `b1.<shard>.<D1 bookmark>.<key>.<tag>`: the shard whose D1 bookmark it carries,
 * the first 8 hex digits of the ENCRYPTION_KEY key's id it was signed with, and an HMAC (with a
 * key derived from that one) of the account, the shard and the D1 bookmark. Only bookmarks this
 * service gave to this account are taken, so none can send a request to wait on another
 * database's position or on one its primary never reached (a future one): D1 would hold such a
 * query until it timed out. One signed with a key no longer listed (after a rotation) cannot be
 * checked: the request reads the primary, and its answer carries a bookmark with today's key.
 */
export const BOOKMARK_HEADER = "Payments-Bookmark";

export interface Bookmark {
  shard: string;
  /** D1's own bookmark on that shard (opaque). */
  d1: string;
}

const PURPOSE = "Payments-Bookmark v1";
const TAG_BYTES = 16;
const FORMAT = /^b1\.([A-Za-z0-9_]{1,64})\.([A-Za-z0-9-]{1,128})\.([0-9a-f]{8})\.([A-Za-z0-9_-]{22})$/;

export const BOOKMARK_MESSAGES = {
  malformed: "Payments-Bookmark is malformed: send back the header of an earlier answer as it came.",
  foreign: "Payments-Bookmark was not given to this account: send back the header of one of its own answers.",
} as const;

/** A bookmark's parts, or null when the text is not one. */
export function parseBookmark(text: string): (Bookmark & { keyId: string; tag: string }) | null {
  const match = FORMAT.exec(text);
  return match ? { shard: match[1]!, d1: match[2]!, keyId: match[3]!, tag: match[4]! } : null;
}

/** Whether `d1` is a D1 bookmark a bookmark may carry (D1 gives hex digits and dashes). */
export function carriable(d1: string | null | undefined): d1 is string {
  return typeof d1 === "string" && /^[A-Za-z0-9-]{1,128}$/.test(d1);
}

async function tag(key: CryptoKey, accountId: string, bookmark: Bookmark): Promise<string> {
  const signed = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${PURPOSE}\n${accountId}\n${bookmark.shard}\n${bookmark.d1}`));
  return base64url(new Uint8Array(signed).slice(0, TAG_BYTES));
}

/** The header value for `bookmark`, given to `accountId`, signed with the newest listed key. */
export async function issueBookmark(encodedKeys: string, accountId: string, bookmark: Bookmark): Promise<string> {
  const [newest] = await macKeys(encodedKeys, PURPOSE);
  return `b1.${bookmark.shard}.${bookmark.d1}.${newest!.id.slice(0, 8)}.${await tag(newest!.key, accountId, bookmark)}`;
}

/**
 * A sent header read back: the bookmark; "unverifiable" when the key it names is not listed (any
 * more); or why it is refused.
 */
export async function readBookmark(encodedKeys: string, accountId: string, text: string): Promise<Bookmark | "unverifiable" | "malformed" | "foreign"> {
  const parsed = parseBookmark(text.trim());
  if (!parsed) return "malformed";
  const signer = (await macKeys(encodedKeys, PURPOSE)).find((key) => key.id.startsWith(parsed.keyId));
  if (!signer) return "unverifiable";
  const bookmark = { shard: parsed.shard, d1: parsed.d1 };
  return constantTimeEqual(await tag(signer.key, accountId, bookmark), parsed.tag) ? bookmark : "foreign";
}

/**
 * The D1 session a request's shard work runs in. A write starts at the primary. A read may be
 * served by a replica: one at least as new as a bookmark the client sent for this shard, or any
 * replica when it sent none (a route that must read the primary says so itself:
 * middleware/bookmark.ts `fromPrimary`). A bookmark of another shard (the account moved since)
 * says nothing about this one, so the read starts at the primary, which is newer than anything the
 * client saw; so does one that cannot be checked (no ENCRYPTION_KEY, or its key is no longer listed).
 */
export function sessionConstraint(method: string, shard: string, sent: Bookmark | "unverifiable" | null): string {
  if (method !== "GET" && method !== "HEAD") return "first-primary";
  if (!sent) return "first-unconstrained";
  return sent !== "unverifiable" && sent.shard === shard ? sent.d1 : "first-primary";
}
