import { describe, expect, it } from "vitest";
import { chooseShard, type ShardState } from "../../src/services/shards";

const shard = (name: string, bytes: number | null, open = true): ShardState => ({ name, accounts: 0, bytes, open });

describe("where a new account goes", () => {
  it.each<[string, ShardState[], string | undefined, ReturnType<typeof chooseShard>]>([
    ["the fewest bytes", [shard("A", 300), shard("B", 200), shard("C", 250)], undefined, { shard: "B" }],
    ["ties by name", [shard("B", 200), shard("A", 200)], undefined, { shard: "A" }],
    ["never a closed shard, however small", [shard("A", 100, false), shard("B", 900)], undefined, { shard: "B" }],
    ["never a shard the configuration lacks", [shard("A", null), shard("B", 900)], undefined, { shard: "B" }],
    ["nowhere when every shard is closed", [shard("A", 100, false)], undefined, { refusal: "No shard is open to new accounts." }],
    ["nowhere without shards", [], undefined, { refusal: "No shard is open to new accounts." }],
    ["the one named, though bigger", [shard("A", 100), shard("B", 900)], "B", { shard: "B" }],
    ["not a named shard that is closed", [shard("A", 100), shard("B", 900, false)], "B", { refusal: 'Shard "B" is closed to new accounts.' }],
    ["not a named shard that is not configured", [shard("A", 100), shard("B", null)], "B", { refusal: 'No shard "B" is configured.' }],
    ["not a name no shard has", [shard("A", 100)], "a", { refusal: 'No shard "a" is configured.' }],
  ])("%s", (_, shards, named, expected) => {
    expect(chooseShard(shards, named)).toEqual(expected);
  });
});
