import type { Db } from "../db/client";
import type { DeliveryMessage } from "../webhooks/message";
import type { Caller } from "./api-users";
import type { Keys } from "./webhook-subscriptions";

/** What every service verb works in: the database, the caller and their account, and the bindings it may touch. */
export interface ServiceContext {
  db: Db;
  accountId: string;
  caller: Caller;
  queue: Queue<DeliveryMessage>;
  keys: Keys;
}
