// @payments/client as a project outside this repository uses it: built JavaScript with its types,
// imported by plain Node (no bundler, no TypeScript loader), and type-checked by tsc in a project of
// its own with Node's module resolution.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");
const CLIENT = join(ROOT, "packages/client");

/** A project with @payments/client (and openapi-fetch, its dependency) in its node_modules. */
function project(files) {
  const dir = mkdtempSync(join(tmpdir(), "client-user-"));
  mkdirSync(join(dir, "node_modules/@payments"), { recursive: true });
  symlinkSync(CLIENT, join(dir, "node_modules/@payments/client"), "dir");
  symlinkSync(join(ROOT, "node_modules/openapi-fetch"), join(dir, "node_modules/openapi-fetch"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

test("plain Node imports it and sends a repeatable filter given as one value or as a list", () => {
  const user = project({
    "main.js": `import { createPaymentsClient } from "@payments/client";
const urls = [];
const api = createPaymentsClient({ baseUrl: "http://127.0.0.1:1", auth: { username: "u", password: "p" }, fetch: async (request) => (urls.push(request.url), Response.json({ count: 0, next: null, previous: null, results: [] })) });
await api.GET("/v1/counterparties/", { params: { query: { type: "supplier" } } });
await api.GET("/v1/counterparties/", { params: { query: { type: ["buyer", "supplier"], internal_id: "SUP-001" } } });
console.log(JSON.stringify(urls));`,
  });
  try {
    const run = spawnSync(process.execPath, ["main.js"], { cwd: user.dir, encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), [
      "http://127.0.0.1:1/v1/counterparties/?type=supplier",
      "http://127.0.0.1:1/v1/counterparties/?type=buyer&type=supplier&internal_id=SUP-001",
    ]);
  } finally {
    user.remove();
  }
});

test("its types take one value or a list for a repeatable filter, and refuse a value that is not a choice", () => {
  const user = project({
    "main.ts": `import { createPaymentsClient } from "@payments/client";
const api = createPaymentsClient({ baseUrl: "http://127.0.0.1:8787", auth: { username: "u", password: "p" } });
export const one = api.GET("/v1/counterparties/", { params: { query: { type: "supplier" } } });
export const many = api.GET("/v2/payments/", { params: { query: { status: ["pending", "in-progress"] } } });
// @ts-expect-error: not a choice
export const wrong = api.GET("/v1/counterparties/", { params: { query: { type: "vendor" } } });
// @ts-expect-error: not a choice, in a list
export const wrongInList = api.GET("/v1/counterparties/", { params: { query: { type: ["buyer", "vendor"] } } });`,
    "tsconfig.json": JSON.stringify({
      compilerOptions: { target: "ES2022", module: "Node16", moduleResolution: "Node16", strict: true, noEmit: true, lib: ["ES2023", "DOM"], types: [] },
      files: ["main.ts"],
    }),
  });
  try {
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    const run = spawnSync(process.execPath, [tsc, "-p", user.dir], { cwd: user.dir, encoding: "utf8" });
    assert.equal(run.status, 0, run.stdout + run.stderr);
  } finally {
    user.remove();
  }
});
