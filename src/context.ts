import type { Db } from "./db/client";
import type { Role } from "./db/schema";
import type { ShardQueue } from "./env";

/**
 * What every tenant-scoped verb (src/services/, src/webhooks/) works in: one per request, made by
 * the route from the authenticated caller. Admin verbs (accounts, API users) act across accounts
 * and take the database alone.
 */
export interface ServiceContext {
  db: Db;
  accountId: string;
  caller: Caller;
  /** The delivery queue, as this account's shard hands over to it. */
  queue: ShardQueue;
  keys: Keys;
  /** The delivery log's archive (R2), when one is bound. */
  archive?: R2Bucket;
  /** Runs work after the answer (the request's waitUntil); without it, the work is awaited. */
  later?: (work: Promise<unknown>) => void;
}

/** The Worker secrets and settings a verb may need: the key that seals webhook secrets, and the local URL policy switch. */
export interface Keys {
  encryptionKey: string | undefined;
  allowLocalUrls: boolean;
}

/** The authenticated API user a request acts for. */
export interface Caller {
  username: string;
  accountId: string;
  role: Role;
  /** The shard that holds the account's data (db/shards.ts). */
  shard: string;
  /**
   * The API password's SHA-256 as the directory stores it, for the webhook rule that a
   * subscription's credentials differ from the caller's own. The password itself is never kept.
   */
  passwordHash: string;
  /** Whether the account requires proof of endpoint ownership (docs/interface.md, "Endpoint ownership"). */
  verifyEndpoints: boolean;
}
