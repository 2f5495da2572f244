import type { Role } from "../db/schema";

/** The authenticated API user a request acts for. */
export interface Caller {
  username: string;
  accountId: string;
  role: Role;
  /** The shard that holds the account's data (db/shards.ts). */
  shard: string;
  /** Kept for the webhook rule that a subscription's credentials differ from the caller's own. */
  password: string;
}
