// packages/client/src/schema.d.ts is what openapi-typescript makes of packages/client/openapi.json
// (whose match with the served document is test/client/openapi-drift.test.ts).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { schemaTypes } from "../../packages/client/generate.mjs";

const file = (path) => readFileSync(new URL(`../../packages/client/${path}`, import.meta.url), "utf8");

test("the client's types are generated from its openapi.json (else run `npm run client:generate`)", async () => {
  assert.equal(file("src/schema.d.ts"), await schemaTypes(JSON.parse(file("openapi.json"))));
});
