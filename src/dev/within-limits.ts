/**
 * The development layer: each invocation (a request, a queue batch, a cron run) runs under an
 * InvocationBudget of Cloudflare's limits, which local workerd does not enforce. On when the
 * PLATFORM_LIMITS variable is "enforce" (the test pool, `npm start`, the benchmark); the deployed
 * configuration leaves it unset, and Cloudflare itself enforces them. D1_ROUND_TRIP_MS adds a delay
 * to every D1 round trip to the primary and D1_REPLICA_ROUND_TRIP_MS (by default the same) to one a
 * read replica may serve, for measuring at a distance.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { CLOUDFLARE, InvocationBudget, type Figures, type Limits } from "./invocation-budget";
import { limitedEnv } from "./limited-bindings";
import { countingD1, newTally, type D1Tally } from "../db/counting-d1";

/** The env with every D1 binding (the directory, the shards) adding its statements' cost to `tally`. */
function countedEnv<E>(env: E, tally: D1Tally): E {
  const counted = Object.entries(env as Record<string, unknown>).map(([name, binding]) =>
    name === "DB" || name.startsWith("SHARD_") ? [name, countingD1(binding as D1Database, tally).db] : [name, binding],
  );
  return Object.fromEntries(counted) as E;
}

/** A tally's figures for the invocation's log line. */
function costOf(tally: D1Tally) {
  return { d1RowsRead: tally.rowsRead, d1RowsWritten: tally.rowsWritten, d1SqlMs: Math.round(tally.sqlMs * 1000) / 1000, d1Statements: tally.statements };
}

interface LayerVars {
  PLATFORM_LIMITS?: string;
  D1_ROUND_TRIP_MS?: string;
  D1_REPLICA_ROUND_TRIP_MS?: string;
}

const current = new AsyncLocalStorage<InvocationBudget>();
let fetchLimited = false;

/**
 * Wraps the global fetch once, on the first invocation under the layer: a fetch made inside an
 * invocation counts against its budget (found by its async context); any other passes through. A
 * test that replaces fetch with a mock goes around the layer while the mock is in place.
 */
function limitFetch(): void {
  if (fetchLimited) return;
  fetchLimited = true;
  const unlimited = globalThis.fetch;
  globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
    const budget = current.getStore();
    if (!budget) return unlimited(input, init);
    return budget.connection(async () => {
      budget.subrequest("fetch");
      return unlimited(input, init);
    });
  }) as typeof fetch;
}

export function enforcesLimits(env: LayerVars): boolean {
  return env.PLATFORM_LIMITS === "enforce";
}

export function limitsOf(env: LayerVars): Limits {
  const ms = (text: string | undefined) => {
    const value = Number(text ?? 0);
    return Number.isFinite(value) && value > 0 ? value : 0;
  };
  return { ...CLOUDFLARE, d1RoundTripMs: ms(env.D1_ROUND_TRIP_MS), d1ReplicaRoundTripMs: ms(env.D1_REPLICA_ROUND_TRIP_MS ?? env.D1_ROUND_TRIP_MS) };
}

export interface Invocation<E> {
  env: E;
  ctx: ExecutionContext;
  budget: InvocationBudget;
}

/**
 * Runs one invocation's handler under a fresh budget: its env's bindings and the global fetch
 * count against it, and what it hands to waitUntil is cut `waitUntilMs` after the handler answers.
 * `report` gets the figures when the handler has answered and its waitUntil work has settled.
 */
export async function withinLimits<E extends object, R>(
  env: E,
  ctx: ExecutionContext,
  handler: (invocation: Invocation<E>) => Promise<R>,
  options: { limits?: Limits; report?: (figures: Figures) => void } = {},
): Promise<R> {
  limitFetch();
  const budget = new InvocationBudget(options.limits ?? CLOUDFLARE);
  const pending: Promise<unknown>[] = [];
  const limitedCtx = {
    waitUntil: (work: Promise<unknown>) => {
      const settled = work.catch(() => {});
      pending.push(settled);
      ctx.waitUntil(work);
    },
    passThroughOnException: () => ctx.passThroughOnException(),
    props: (ctx as { props?: unknown }).props,
  } as ExecutionContext;
  try {
    return await current.run(budget, () => handler({ env: limitedEnv(env, budget), ctx: limitedCtx, budget }));
  } finally {
    budget.eventEnded();
    const done = Promise.all(pending).then(() => {
      budget.finished();
      options.report?.(budget.figures);
    });
    ctx.waitUntil(done);
  }
}

/** The figures as Server-Timing entries, beside the D1 tally's (SERVER_TIMING). */
export function limitsTiming(figures: Figures): string {
  return [
    `cf-d1-replica-calls;desc="${figures.d1ReplicaCalls}"`,
    `cf-connections-peak;desc="${figures.peakConnections}"`,
    `cf-connections-waited;desc="${figures.waitedConnections}"`,
    `cf-subrequests;desc="${figures.subrequests}"`,
    `cf-d1-queries;desc="${figures.d1Queries}"`,
    `cf-largest-result;desc="${figures.largestResultBytes}"`,
    `cf-largest-value;desc="${figures.largestValueBytes}"`,
  ].join(", ");
}

type Handlers<E, M> = Required<Pick<ExportedHandler<E, M>, "fetch" | "queue" | "scheduled">>;

/**
 * The Worker's handlers, each invocation under the layer when its env enforces the limits. A
 * request's figures go into its Server-Timing header when SERVER_TIMING is on; a queue batch's and
 * a cron run's into one log line (`invocation_limits`), a warning so that `wrangler dev
 * --log-level warn` (the benchmark) shows it without every request's line.
 */
export function underPlatformLimits<E extends LayerVars & { SERVER_TIMING?: string }, M>(handlers: Handlers<E, M>): Handlers<E, M> {
  const logged = (handler: string) => (figures: Figures) => console.warn(JSON.stringify({ type: "invocation_limits", handler, ...figures }));
  return {
    fetch(request, env, ctx) {
      if (!enforcesLimits(env)) return handlers.fetch(request, env, ctx);
      return withinLimits(
        env,
        ctx,
        async (invocation) => {
          const response = await handlers.fetch(request, invocation.env, invocation.ctx);
          if (env.SERVER_TIMING !== "true") return response;
          const timed = new Response(response.body, response);
          timed.headers.append("Server-Timing", limitsTiming(invocation.budget.figures));
          return timed;
        },
        { limits: limitsOf(env) },
      );
    },
    queue(batch, env, ctx) {
      if (!enforcesLimits(env)) return handlers.queue(batch, env, ctx);
      // With SERVER_TIMING, what the batch cost D1 too: rows read and written, SQL time (npm run capacity).
      const tally = env.SERVER_TIMING === "true" ? newTally() : null;
      const report = (figures: Figures) =>
        console.warn(
          JSON.stringify({ type: "invocation_limits", handler: "queue", messages: batch.messages.length, ...figures, ...(tally ? costOf(tally) : {}) }),
        );
      return withinLimits(env, ctx, async (invocation) => handlers.queue(batch, tally ? countedEnv(invocation.env, tally) : invocation.env, invocation.ctx), {
        limits: limitsOf(env),
        report,
      });
    },
    scheduled(controller, env, ctx) {
      if (!enforcesLimits(env)) return handlers.scheduled(controller, env, ctx);
      return withinLimits(env, ctx, async (invocation) => handlers.scheduled(controller, invocation.env, invocation.ctx), {
        limits: limitsOf(env),
        report: logged("scheduled"),
      });
    },
  };
}
