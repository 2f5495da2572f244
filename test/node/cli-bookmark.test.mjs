// The command line's calls send back the newest Payments-Bookmark an answer gave (docs/interface.md
// 10.2), so a command reads what it wrote. A stand-in service on 127.0.0.1 plays the API's part.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";
import { newerBookmark, serviceClient } from "../../packages/cli/api.js";

test("each call sends the newest bookmark the answers before it gave, and none before the first", async () => {
  const given = ["b1.A.00000002.t", "b1.A.00000005.u", "b1.A.00000003.v", null, "b1.B.00000001.w"];
  const sent = [];
  const server = createServer((req, res) => {
    sent.push(req.headers["payments-bookmark"] ?? null);
    const bookmark = given[sent.length - 1];
    res.writeHead(200, { "content-type": "application/json", ...(bookmark ? { "payments-bookmark": bookmark } : {}) }).end("{}");
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  try {
    const client = serviceClient({ url: `http://127.0.0.1:${server.address().port}`, username: "u", password: "p" });
    for (let i = 0; i < given.length + 1; i++) await client.request(i % 2 ? "POST" : "GET", "/v1/counterparties/", i % 2 ? { body: {} } : {});
    // The third answer's bookmark is older than the second's; the fourth gives none; the fifth is the shard the account moved to.
    assert.deepEqual(sent, [null, "b1.A.00000002.t", "b1.A.00000005.u", "b1.A.00000005.u", "b1.A.00000005.u", "b1.B.00000001.w"]);
  } finally {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

test("newerBookmark keeps the greater on one shard and the later across shards", () => {
  assert.equal(newerBookmark(null, "b1.A.1.t"), "b1.A.1.t");
  assert.equal(newerBookmark("b1.A.00000002.t", "b1.A.00000001.u"), "b1.A.00000002.t");
  assert.equal(newerBookmark("b1.A.00000002.t", "b1.A.00000003.u"), "b1.A.00000003.u");
  assert.equal(newerBookmark("b1.A.00000009.t", "b1.B.00000001.u"), "b1.B.00000001.u");
});
