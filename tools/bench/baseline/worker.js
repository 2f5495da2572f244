// The delivery baseline: a bare queue consumer that only POSTs each message's body to its URL
// and acks, on the same queue settings as the service's consumer. POST /send {url, bodies: [...]}
// enqueues one message per body.
export default {
  async fetch(request, env) {
    const { url, bodies } = await request.json();
    for (let start = 0; start < bodies.length; start += 100) {
      await env.QUEUE.sendBatch(bodies.slice(start, start + 100).map((body) => ({ body: { url, body } })));
    }
    return new Response("queued", { status: 202 });
  },
  async queue(batch) {
    await Promise.all(
      batch.messages.map(async (message) => {
        const response = await fetch(message.body.url, { method: "POST", headers: { "content-type": "application/json" }, body: message.body.body });
        await response.arrayBuffer();
        message.ack();
      }),
    );
  },
};
