/**
 * The Worker's bindings as one invocation sees them under the platform's limits: every D1 call,
 * R2 call and queue send goes through its InvocationBudget (a connection, and a query or a
 * subrequest counted), and each D1 round trip waits `d1RoundTripMs` first when measuring at a
 * distance. Drizzle and the code above see the same interfaces.
 */
import { gatedD1 } from "../db/gated-d1";
import { valueBytes, type InvocationBudget } from "./invocation-budget";

const delay = (ms: number) => (ms > 0 ? new Promise((done) => setTimeout(done, ms)) : Promise.resolve());

/** A D1 binding whose every round trip is a connection of the budget, its queries counted, its values, SQL and result checked. */
export function limitedD1<T extends D1Database | D1DatabaseSession>(d1: T, budget: InvocationBudget): T {
  return gatedD1(d1, {
    prepared: (sql) => budget.statement(sql),
    bound: (value) => budget.value(valueBytes(value)),
    call: (statements, run, results) =>
      budget.connection(async () => {
        budget.d1Call(statements);
        await delay(budget.limits.d1RoundTripMs);
        const result = await run();
        for (const rows of results(result)) budget.result(valueBytes(rows));
        return result;
      }),
  });
}

function limitedR2(bucket: R2Bucket, budget: InvocationBudget): R2Bucket {
  const through =
    (name: keyof R2Bucket) =>
    (...args: unknown[]) =>
      budget.connection(async () => {
        budget.subrequest(`R2 ${String(name)}`);
        return (bucket[name] as (...a: unknown[]) => Promise<unknown>).apply(bucket, args);
      });
  return { head: through("head"), get: through("get"), put: through("put"), delete: through("delete"), list: through("list"), createMultipartUpload: through("createMultipartUpload"), resumeMultipartUpload: (key: string, id: string) => bucket.resumeMultipartUpload(key, id) } as unknown as R2Bucket;
}

function limitedQueue<T>(queue: Queue<T>, budget: InvocationBudget): Queue<T> {
  return {
    send: (body: T, options?: QueueSendOptions) =>
      budget.connection(async () => {
        budget.subrequest("Queue send");
        return queue.send(body, options);
      }),
    sendBatch: (messages: Iterable<MessageSendRequest<T>>, options?: QueueSendBatchOptions) =>
      budget.connection(async () => {
        budget.subrequest("Queue sendBatch");
        return queue.sendBatch(messages, options);
      }),
  } as Queue<T>;
}

const isD1 = (value: any) => typeof value?.prepare === "function" && typeof value?.batch === "function";
const isR2 = (value: any) => typeof value?.put === "function" && typeof value?.head === "function" && typeof value?.list === "function";
const isQueue = (value: any) => typeof value?.send === "function" && typeof value?.sendBatch === "function";

/** `env` with its D1, R2 and queue bindings under `budget`; every other binding and variable as it is. */
export function limitedEnv<E extends object>(env: E, budget: InvocationBudget): E {
  const made = new Map<PropertyKey, unknown>();
  return new Proxy(env, {
    get(target, key, receiver) {
      const value: any = Reflect.get(target, key, receiver);
      if (made.has(key)) return made.get(key);
      const limited = isD1(value) ? limitedD1(value, budget) : isR2(value) ? limitedR2(value, budget) : isQueue(value) ? limitedQueue(value, budget) : undefined;
      if (limited === undefined) return value;
      made.set(key, limited);
      return limited;
    },
  });
}
