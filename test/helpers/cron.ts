import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { vi } from "vitest";
import worker from "../../src/index";
import type { DeliveryMessage } from "../../src/webhooks";

/** A JSON log line of the Worker's. */
export type LogLine = Record<string, any>;

/**
 * One run of cron trigger `cron` through the Worker, under the development layer's limits, with
 * `bindings` over the test's (a recording queue, a failing shard): the JSON lines it logged.
 */
export async function cronRun(bindings: Partial<typeof env> = {}, { scheduledTime = Date.now(), cron = "* * * * *" } = {}): Promise<LogLine[]> {
  const log = vi.spyOn(console, "log");
  const warn = vi.spyOn(console, "warn");
  const error = vi.spyOn(console, "error");
  try {
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime, cron }), { ...env, ...bindings }, ctx);
    await waitOnExecutionContext(ctx);
    return [...log.mock.calls, ...warn.mock.calls, ...error.mock.calls]
      .map(([line]) => String(line))
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as LogLine);
  } finally {
    log.mockRestore();
    warn.mockRestore();
    error.mockRestore();
  }
}

/** A queue that records the deliveries handed to it, in `sent`. */
export function recordingQueue(sent: string[]): Queue<DeliveryMessage> {
  return {
    send: async (body: DeliveryMessage) => void sent.push(body.delivery_id),
    sendBatch: async (messages: Iterable<{ body: DeliveryMessage }>) => void sent.push(...[...messages].map((m) => m.body.delivery_id)),
  } as unknown as Queue<DeliveryMessage>;
}

/** The line of job `job` (on `shard`, when given) in a run's lines. */
export const jobLine = (lines: LogLine[], job: string, shard?: string) =>
  lines.find((line) => (line.type === "cron_job" || line.type === "cron_error") && line.job === job && (shard === undefined || line.shard === shard));
