/** A shard database (a `SHARD_<name>` binding): every row of the accounts it holds. */
export * from "./tenants";
export * from "./counterparties";
export * from "./invoices";
export * from "./list-counts";
export * from "./payment-events";
export * from "./payment-invoices";
export * from "./payments";
export * from "./webhook-deliveries";
export * from "./webhook-subscriptions";
export * from "./webhook-replays";
export * from "./time-counts";
export * from "./idempotency-keys";
export * from "./webhook-stats";
export * from "./moves";
export * from "./sweep-marks";
export * from "./status-counts";
