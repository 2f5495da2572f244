import assert from "node:assert/strict";
import { test } from "node:test";
import { invocationFigures } from "../../tools/lib/service.mjs";

test("the benchmark reads the development layer's lines from wrangler's output: per handler, how many and the most of each figure", () => {
  const line = (handler, d1Queries, peakConnections) => JSON.stringify({ type: "invocation_limits", handler, d1Calls: 1, d1Queries, subrequests: 0, peakConnections, waitedConnections: 0, largestResultBytes: 10, largestValueBytes: 5 });
  const output = [
    "[wrangler:info] Ready on http://127.0.0.1:8787",
    line("queue", 12, 6),
    `some prefix ${line("queue", 40, 3)}`,
    line("scheduled", 225, 3),
    '{"type":"invocation_limits", broken',
    '{"type":"request","status":200}',
  ].join("\n");
  assert.deepEqual(invocationFigures(output), {
    queue: { invocations: 2, d1Calls: 1, d1Queries: 40, subrequests: 0, peakConnections: 6, waitedConnections: 0, largestResultBytes: 10, largestValueBytes: 5 },
    scheduled: { invocations: 1, d1Calls: 1, d1Queries: 225, subrequests: 0, peakConnections: 3, waitedConnections: 0, largestResultBytes: 10, largestValueBytes: 5 },
  });
});
