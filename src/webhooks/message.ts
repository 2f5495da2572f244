/** A queue message: which delivery to attempt. Everything else is read from D1 when it arrives. */
export interface DeliveryMessage {
  delivery_id: string;
}

const SEND_BATCH_LIMIT = 100;

/** Hands deliveries to the queue, in batches of the most it takes at once. */
export async function enqueueDeliveries(queue: Queue<DeliveryMessage>, ids: string[]): Promise<void> {
  for (let start = 0; start < ids.length; start += SEND_BATCH_LIMIT) {
    const chunk = ids.slice(start, start + SEND_BATCH_LIMIT);
    await queue.sendBatch(chunk.map((id) => ({ body: { delivery_id: id }, contentType: "json" as const })));
  }
}
