/**
 * Cloudflare's documented limits that this service must keep within, each beside the page it
 * comes from, for the plan it targets: Workers Paid (the Standard usage model), which the README
 * names. Every loop, page, batch and copy that could cross one imports its number from here; a
 * limit joins the file with the code it bounds.
 *
 * Workers: https://developers.cloudflare.com/workers/platform/limits/
 * D1:      https://developers.cloudflare.com/d1/platform/limits/
 */

/** Outgoing connections an invocation may have waiting for response headers at once (fetches and D1 calls); a seventh waits. Workers limits, "Simultaneous open connections". */
export const SIMULTANEOUS_CONNECTIONS = 6;

/** Bytes of one string, BLOB or table row in D1. D1 limits, "Maximum string, BLOB or table row size". */
export const D1_MAX_VALUE_BYTES = 2_000_000;

/** Bound parameters of one query. D1 limits, "Maximum bound parameters per query". */
export const D1_MAX_BOUND_PARAMETERS = 100;

/** Bytes of one query's result. D1 limits, "Maximum query result size". */
export const D1_MAX_RESULT_BYTES = 50_000_000;

/** Subrequests one invocation may make (fetches and calls to R2 and Queues). Workers limits, "Subrequests" (Workers Paid; 50 on Free). */
export const SUBREQUESTS_PER_INVOCATION = 10_000;

/** D1 queries one invocation may make, every statement of a batch counted. D1 limits, "Queries per Worker invocation" (Workers Paid; 50 on Free). */
export const D1_QUERIES_PER_INVOCATION = 1_000;

/** Arguments of one SQL function call. D1 limits, "Maximum arguments per SQL function". */
export const D1_MAX_FUNCTION_ARGUMENTS = 32;

/** How long work handed to `waitUntil` may go on after the event's answer. Workers limits, "Duration" (waitUntil). */
export const WAIT_UNTIL_MS = 30_000;
