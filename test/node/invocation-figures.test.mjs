import assert from "node:assert/strict";
import { test } from "node:test";
import { invocationFigures } from "../../tools/lib/service.mjs";

test("the benchmark reads the development layer's lines from wrangler's output: per handler, how many, the most of each figure, the sums of the costs, and a queue batch's round trips per message", () => {
  const line = (handler, d1Queries, peakConnections, more = {}) =>
    JSON.stringify({
      type: "invocation_limits",
      handler,
      ...more,
      d1Calls: 1,
      d1Queries,
      subrequests: 0,
      peakConnections,
      waitedConnections: 0,
      largestResultBytes: 10,
      largestValueBytes: 5,
    });
  const output = [
    "[wrangler:info] Ready on http://127.0.0.1:8787",
    line("queue", 12, 6, { messages: 3, d1RowsRead: 100, d1RowsWritten: 7, d1SqlMs: 0.5 }),
    `some prefix ${line("queue", 40, 3, { messages: 1, d1RowsRead: 20, d1RowsWritten: 1, d1SqlMs: 0.25 })}`,
    line("scheduled", 225, 3),
    '{"type":"invocation_limits", broken',
    '{"type":"request","status":200}',
  ].join("\n");
  assert.deepEqual(invocationFigures(output), {
    queue: {
      invocations: 2,
      totalD1Calls: 2,
      totalMessages: 4,
      totals: { d1Queries: 52, d1RowsRead: 120, d1RowsWritten: 8, d1SqlMs: 0.75 },
      d1CallsPerMessage: 0.5,
      d1Calls: 1,
      d1Queries: 40,
      d1RowsRead: 100,
      d1RowsWritten: 7,
      d1SqlMs: 0.5,
      subrequests: 0,
      peakConnections: 6,
      waitedConnections: 0,
      largestResultBytes: 10,
      largestValueBytes: 5,
    },
    scheduled: {
      invocations: 1,
      totalD1Calls: 1,
      totalMessages: 0,
      totals: { d1Queries: 225 },
      d1CallsPerMessage: null,
      d1Calls: 1,
      d1Queries: 225,
      subrequests: 0,
      peakConnections: 3,
      waitedConnections: 0,
      largestResultBytes: 10,
      largestValueBytes: 5,
    },
  });
});
