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

