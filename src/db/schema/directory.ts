/** The directory database (binding `DB`): what a request needs before it knows its tenant's shard. */
export * from "./accounts";
export * from "./api-users";
export * from "./auth-failures";
export * from "./shards";
export * from "./published-keys";
