import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ReplayMessage } from "../../src/env";
import { runReplaySteps, STEPS_AT_ONCE } from "../../src/webhooks/delivery/replay-messages";

/** A queue message as the consumer gets it, saying what was done with it. */
function message(body: ReplayMessage) {
  const done: string[] = [];
  return { body, done, ack: () => void done.push("ack"), retry: () => void done.push("retry") } as unknown as Message<ReplayMessage> & { done: string[] };
}

describe("a batch's replay steps", () => {
  it(`runs one step a replay, ${STEPS_AT_ONCE} replays at most, and sends the others back to the queue`, async () => {
    const sent: ReplayMessage[] = [];
    const queue = { send: async (body: ReplayMessage) => void sent.push(body), sendBatch: async () => {} } as unknown as Queue;
    const ids = Array.from({ length: STEPS_AT_ONCE + 2 }, (_, i) => `rpl_gone${i}`);
    const messages = [...ids, ids[0]!].map((id) => message({ replay_id: id, shard: "A" }));
    // Replays that are not there: a step ends them at once and asks for no next one.
    await runReplaySteps(messages, { ...env, DELIVERIES: queue });
    expect(messages.map((m) => m.done)).toEqual(messages.map(() => ["ack"]));
    expect(sent).toEqual(ids.slice(STEPS_AT_ONCE).map((id) => ({ replay_id: id, shard: "A" })));
  });

  it("sends a step whose shard the configuration lacks back later, and acks one with no shard", async () => {
    const [unbound, none] = [message({ replay_id: "rpl_x", shard: "Z" }), message({ replay_id: "rpl_y", shard: undefined as unknown as string })];
    await runReplaySteps([unbound, none], env);
    expect([unbound.done, none.done]).toEqual([["retry"], ["ack"]]);
  });
});
