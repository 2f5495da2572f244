/**
 * The Worker's bindings as one invocation sees them under the platform's limits: every D1 call,
 * R2 call and queue send goes through its InvocationBudget (a connection, and a query or a
 * subrequest counted), and each D1 round trip waits `d1RoundTripMs` (to the primary) or
 * `d1ReplicaRoundTripMs` (one a read replica may serve) first when measuring at a distance. Drizzle
 * and the code above see the same interfaces.
 */
import { gatedD1 } from "../db/gated-d1";
import { valueBytes, type InvocationBudget } from "./invocation-budget";

const delay = (ms: number) => (ms > 0 ? new Promise((done) => setTimeout(done, ms)) : Promise.resolve());

/** Whether a statement writes (it then goes to the primary, in any session). Pure. */
export function writes(sql: string): boolean {
  return /^\s*(?:with\b[\s\S]*?\)\s*)?(?:insert|update|delete|replace)\b/i.test(sql);
}

/**
 * Where D1 may send a session's round trip, by D1's Sessions API: a write, and the binding used
 * without a session, to the primary; a session's reads to a read replica, but for the first of a
 * "first-primary" session (a bookmark or "first-unconstrained" lets a replica take even the first).
 */
function sessionGate(budget: InvocationBudget, constraint: string | null) {
  let started = false;
  const gate = {
    prepared: (sql: string) => budget.statement(sql),
    bound: (value: unknown) => budget.value(valueBytes(value)),
    call: <T>(sqls: string[], run: () => Promise<T>, results: (result: T) => unknown[]) =>
      budget.connection(async () => {
        const replica = constraint !== null && !sqls.some(writes) && (started || constraint !== "first-primary");
        started = true;
        budget.d1Call(sqls.length, replica);
        await delay(replica ? budget.limits.d1ReplicaRoundTripMs : budget.limits.d1RoundTripMs);
        const result = await run();
        for (const rows of results(result)) budget.result(valueBytes(rows));
        return result;
      }),
    session: (next: string | undefined) => sessionGate(budget, next ?? "first-primary"),
  };
  return gate;
}

/**
 * A D1 binding whose every round trip is a connection of the budget, its queries counted (to the
 * primary or replica-eligible), its values, SQL and result checked, and its delay added when
 * measuring at a distance.
 */
export function limitedD1<T extends D1Database | D1DatabaseSession>(d1: T, budget: InvocationBudget): T {
  return gatedD1(d1, sessionGate(budget, null));
}

function limitedR2(bucket: R2Bucket, budget: InvocationBudget): R2Bucket {
  const through =
    (name: keyof R2Bucket) =>
    (...args: unknown[]) =>
      budget.connection(async () => {
        budget.subrequest(`R2 ${String(name)}`);
        return (bucket[name] as (...a: unknown[]) => Promise<unknown>).apply(bucket, args);
      });
  return {
    head: through("head"),
    get: through("get"),
    put: through("put"),
    delete: through("delete"),
    list: through("list"),
    createMultipartUpload: through("createMultipartUpload"),
    resumeMultipartUpload: (key: string, id: string) => bucket.resumeMultipartUpload(key, id),
  } as unknown as R2Bucket;
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
      const limited = isD1(value)
        ? limitedD1(value, budget)
        : isR2(value)
          ? limitedR2(value, budget)
          : isQueue(value)
            ? limitedQueue(value, budget)
            : undefined;
      if (limited === undefined) return value;
      made.set(key, limited);
      return limited;
    },
  });
}
