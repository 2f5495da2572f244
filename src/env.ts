import type { Db } from "./db/client";
import type { Caller } from "./services/api-users";

/** The Worker's bindings, as declared in wrangler.toml and its secrets. */
export interface Env {
  DB: D1Database;
  DELIVERIES: Queue<import("./webhooks/message").DeliveryMessage>;
  ADMIN_TOKEN?: string;
  ENCRYPTION_KEY?: string;
  ALLOW_LOCAL_WEBHOOK_URLS?: string;
}

export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    db: Db;
    caller: Caller;
  };
}
