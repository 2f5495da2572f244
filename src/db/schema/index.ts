export * from "./directory";
export * from "./shard";
