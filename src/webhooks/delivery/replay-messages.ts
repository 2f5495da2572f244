import { createDb } from "../../db/client";
import { shardBinding, shardNotConfigured } from "../../db/shards";
import type { Env, QueueMessage, ReplayMessage } from "../../env";
import { continueReplay } from "../replays/steps";

/** When a replay's step fails (D1 down, its account moving), its message comes back this much later. */
const STEP_RETRY_SECONDS = 30;

/** Whether a message of the DELIVERIES queue is a replay's step (the others name a delivery). Pure. */
export function isReplayStep(message: Message<QueueMessage>): message is Message<ReplayMessage> {
  return typeof (message.body as Partial<ReplayMessage> | undefined)?.replay_id === "string";
}

/** Replay steps one invocation runs at most (each bounded in D1 queries and bytes: replays/steps.ts); the rest go back to the queue. */
export const STEPS_AT_ONCE = 4;

/**
 * Runs the replay steps a batch carries (replays/steps.ts), one after another, each on its shard,
 * and sends each replay's next step: at once, or after the wait the step asked for. A replay named
 * twice in the batch takes one step (its chain goes on from it); past STEPS_AT_ONCE replays, a
 * step goes back to the queue as a new message. A step that fails comes back later; one whose
 * shard the configuration lacks too (one with no shard is acked: the cron finds its replay stalled).
 */
export async function runReplaySteps(messages: readonly Message<ReplayMessage>[], env: Env): Promise<void> {
  const seen = new Set<string>();
  for (const message of messages) {
    const { replay_id: replayId, shard } = message.body;
    const key = `${shard} ${replayId}`;
    if (seen.has(key)) {
      message.ack();
      continue;
    }
    seen.add(key);
    if (seen.size > STEPS_AT_ONCE) {
      await env.DELIVERIES.send({ replay_id: replayId, shard }, { contentType: "json" }).then(
        () => message.ack(),
        () => message.retry({ delaySeconds: STEP_RETRY_SECONDS }),
      );
      continue;
    }
    const binding = typeof shard === "string" ? shardBinding(env, shard) : undefined;
    if (!binding) {
      shardNotConfigured(shard, { replay_id: replayId });
      if (typeof shard === "string") message.retry({ delaySeconds: STEP_RETRY_SECONDS });
      else message.ack();
      continue;
    }
    const queue = { queue: env.DELIVERIES, shard };
    try {
      const step = await continueReplay(createDb(binding), env.ARCHIVE, queue, replayId, Date.now());
      if (step.next !== "none") {
        await queue.queue.send({ replay_id: replayId, shard }, { contentType: "json", ...(step.next === "later" ? { delaySeconds: step.delaySeconds } : {}) });
      }
      message.ack();
    } catch (error) {
      console.error(JSON.stringify({ type: "replay_step_error", shard, replay_id: replayId, error: String(error) }));
      message.retry({ delaySeconds: STEP_RETRY_SECONDS });
    }
  }
}
