import type { Db } from "./db/client";
import type { RequestSession } from "./db/session";
import type { D1Tally } from "./db/counting-d1";
import type { Env } from "./env";
import type { RequestKey } from "./idempotency";
import type { Caller } from "./context";

/** Hono's environment of the app: the Worker's bindings, and what each request sets as it goes. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    /** The directory, in this request's session. */
    directory: Db;
    /** After authentication: the caller's shard, in this request's session. Tenant verbs reach no other. */
    db: Db;
    /** That session itself: its bookmark. */
    shardSession: RequestSession;
    caller: Caller;
    /** Set for a POST with an Idempotency-Key: the key and the request it came with (middleware/idempotency.ts). */
    key?: RequestKey;
    /** Set when SERVER_TIMING is on: what this request's statements cost D1. */
    d1Tally?: D1Tally;
  };
}
