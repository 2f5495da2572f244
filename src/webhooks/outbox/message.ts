import type { ShardQueue } from "../../env";

export type { DeliveryMessage, QueueMessage, ReplayMessage, ShardQueue } from "../../env";

const SEND_BATCH_LIMIT = 100;

export type Handover = string | { id: string; delaySeconds: number };

/** Hands deliveries to the queue (now, or after a delay), in batches of the most it takes at once. */
export async function enqueueDeliveries({ queue, shard }: ShardQueue, items: Handover[]): Promise<void> {
  for (let start = 0; start < items.length; start += SEND_BATCH_LIMIT) {
    const chunk = items.slice(start, start + SEND_BATCH_LIMIT);
    await queue.sendBatch(
      chunk.map((item) =>
        typeof item === "string"
          ? { body: { delivery_id: item, shard }, contentType: "json" as const }
          : { body: { delivery_id: item.id, shard }, contentType: "json" as const, delaySeconds: item.delaySeconds },
      ),
    );
  }
}
