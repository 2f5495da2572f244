/**
 * Cloudflare's documented limits that this service must keep within, each beside the page it
 * comes from, for the plan it targets: Workers Paid (the Standard usage model), which the README
 * names. Every loop, page, batch and copy that could cross one imports its number from here.
 *
 * Workers: https://developers.cloudflare.com/workers/platform/limits/
 * D1:      https://developers.cloudflare.com/d1/platform/limits/
 * Queues:  https://developers.cloudflare.com/queues/platform/limits/
 */

/** Outgoing connections an invocation may have waiting for response headers at once (fetches and D1 calls); a seventh waits. Workers limits, "Simultaneous open connections". */
export const SIMULTANEOUS_CONNECTIONS = 6;

/** Subrequests per invocation on Workers Paid (50 on Free). Workers limits, "Subrequests". */
export const SUBREQUESTS_PER_INVOCATION = 10_000;

/** D1 queries per Worker invocation on Workers Paid (50 on Free). D1 limits, "Queries per Worker invocation". */
export const D1_QUERIES_PER_INVOCATION = 1_000;

/** Bytes of one string, BLOB or table row in D1. D1 limits, "Maximum string, BLOB or table row size". */
export const D1_MAX_VALUE_BYTES = 2_000_000;

/** Bytes of one SQL statement. D1 limits, "Maximum SQL statement length". */
export const D1_MAX_STATEMENT_BYTES = 100_000;

/** Bound parameters of one query. D1 limits, "Maximum bound parameters per query". */
export const D1_MAX_BOUND_PARAMETERS = 100;

/** Arguments of one SQL function call. D1 limits, "Maximum arguments per SQL function". */
export const D1_MAX_FUNCTION_ARGUMENTS = 32;

/** Bytes of one query's result. D1 limits, "Maximum query result size". */
export const D1_MAX_RESULT_BYTES = 50_000_000;

/** Memory of one isolate. Workers limits, "Memory". */
export const ISOLATE_MEMORY_BYTES = 128 * 1024 * 1024;

/** How long work passed to waitUntil may go on after the event's answer. Workers limits, "Duration" (waitUntil). */
export const WAIT_UNTIL_MS = 30_000;
