// The house's rules (tools/dev/structure.mjs) hold in src/, and each check finds what it is for.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  devImports,
  filesUnder,
  missingFileNames,
  missingSections,
  numberedSections,
  rawBatches,
  repeatedRuns,
  unknownNames,
  upwardImports,
  walkProblems,
} from "../../tools/dev/structure.mjs";

const src = filesUnder("src");
const planted = (texts) => (path) => texts[path];

describe("the house's rules", () => {
  it("no import in src/ points up, no comment names a missing file, no six lines repeat", () => {
    assert.ok(src.length > 100);
    assert.deepEqual(upwardImports(src), []);
    assert.deepEqual(devImports(src), []);
    assert.deepEqual(rawBatches(src), []);
    assert.deepEqual(missingFileNames(src), []);
    assert.deepEqual(missingSections(src), []);
    assert.deepEqual(numberedSections(src), []);
    assert.deepEqual(unknownNames(src), []);
    assert.deepEqual(repeatedRuns(src), []);
    assert.deepEqual(walkProblems(), []);
  });

  it("finds a batch run without names or read by position, outside the rooms that name batches", () => {
    const texts = {
      "src/services/a.ts": [
        "const [rows, counts] = await db.batch([a, b]);",
        "const first = (await runBatch(db, [a, b]))[0];",
        "const all = (await runBatch(db, statements)).flat();",
        "const { rows } = await runNamedBatch(db, { rows: a });",
        "// a comment that says db.batch( is no code",
        "/* nor db.batch([a]) in a block */",
      ].join("\n"),
      "src/db/client.ts": "return db.batch(statements);\n",
    };
    assert.deepEqual(rawBatches(Object.keys(texts), planted(texts)), ["src/services/a.ts:1", "src/services/a.ts:2"]);
  });

  it("finds a walk's step whose file or function is not there, and a walk too long", () => {
    const steps = (n) => Array.from({ length: n }, (_, i) => `${i + 1}. \`src/app.ts\` \`createApp()\`: a step.`).join("\n");
    const texts = {
      "docs/walks.md": [
        "# Doc",
        "## Walks",
        "1. `src/app.ts` `createApp()`: there.",
        "2. `src/gone.ts` `anything()`: a file that is not there.",
        "3. `src/app.ts` `createApp()`, `applyRefund()`: a function that is not.",
        "",
        steps(13),
        "## After",
        "1. `src/gone.ts`: past the section, not a walk.",
      ].join("\n"),
      "src/app.ts": "export function createApp() {}\n// applyRefund() in a comment is no code\n",
    };
    assert.deepEqual(walkProblems("docs/walks.md", planted(texts)), [
      "docs/walks.md: step 2 names src/gone.ts, which is not there",
      "docs/walks.md: step 3 names applyRefund() in src/app.ts, which has no such code",
      "docs/walks.md: a walk of more than 12 steps (step 13)",
    ]);
  });

  it("finds a comment that cites a section by a number docs/interface.md has no heading for", () => {
    const texts = {
      "src/db/scope.ts": "/** The detail of section 5.1, as sections 7 and 9.2 say. */\n// § 10.3, and the 5.1 release\nconst section = 5;\n",
    };
    assert.deepEqual(numberedSections(Object.keys(texts), planted(texts)), [
      "src/db/scope.ts: section 5.1",
      "src/db/scope.ts: section 7",
      "src/db/scope.ts: section 9.2",
      "src/db/scope.ts: section 10.3",
    ]);
  });

  it("finds a comment that names, in backticks, code that no file under src/ has", () => {
    const texts = {
      "src/db/scope.ts":
        "/**\n * As `applyRefund()` and `detailBefore` do, or `KeyWandered`; `runNamedBatch`, `RETENTION_PER_RUN` and\n * `scopeHere` are there; `pending`, `p.updated_at` and `hook-sequence` are no names of code.\n */\nexport const scopeHere = 1;\n",
    };
    assert.deepEqual(unknownNames(Object.keys(texts), planted(texts)), [
      "src/db/scope.ts: `applyRefund`",
      "src/db/scope.ts: `detailBefore`",
      "src/db/scope.ts: `KeyWandered`",
    ]);
  });

  it("finds an import that points up, between rooms and between the webhooks' rooms, a type import included", () => {
    const texts = {
      "src/lib/time.ts": 'import { countKey } from "../services/counts";\n',
      "src/db/scope.ts": 'import type {\n  AppEnv,\n} from "../app-env";\n',
      "src/webhooks/wire/payload.ts": 'export { recordAttempts } from "../delivery/record";\n',
      "src/webhooks/outbox/outbox.ts": 'import { sweepOutbox } from "../upkeep/sweeper";\nimport { signedHeaders } from "../wire/signing";\n',
      "src/services/invoices.ts": 'import { handOver } from "../webhooks";\nimport type { Env } from "../env";\n',
    };
    assert.deepEqual(upwardImports(Object.keys(texts), planted(texts)), [
      "lib/time.ts -> services/counts/index.ts (services is not below lib)",
      "db/scope.ts -> app-env.ts (app-env.ts is not below db)",
      "webhooks/wire/payload.ts -> webhooks/delivery/record.ts (webhooks/delivery is not below webhooks/wire)",
      "webhooks/outbox/outbox.ts -> webhooks/upkeep/sweeper.ts (webhooks/upkeep is not below webhooks/outbox)",
    ]);
  });

  it("finds an import of the development layer anywhere but the edge", () => {
    const texts = {
      "src/index.ts": 'import { localSettings } from "./dev";\n',
      "src/routes/common.ts": 'import { deliveriesQueue } from "../dev";\n',
      "src/webhooks/upkeep/sweeper.ts": 'import { lostAtRestart } from "../../dev/restart-sweep";\n',
      "src/dev/index.ts": 'export { localSettings } from "./local-faults";\n',
    };
    assert.deepEqual(devImports(Object.keys(texts), planted(texts)), [
      "routes/common.ts -> dev/index.ts",
      "webhooks/upkeep/sweeper.ts -> dev/restart-sweep.ts",
    ]);
  });

  it("finds a comment that names a file that is not there, whichever folder it is named from", () => {
    const texts = {
      "src/db/scope.ts":
        '/** See services/counts/index.ts, ./client.ts and webhooks/retention.ts. */\n// and schema/gone.ts\nconst url = "https://example.com/x.ts";\n',
    };
    assert.deepEqual(missingFileNames(Object.keys(texts), planted(texts)), ["src/db/scope.ts: webhooks/retention.ts", "src/db/scope.ts: schema/gone.ts"]);
  });

  it("finds a comment that cites a section its document does not have, across a comment's lines", () => {
    const texts = {
      "src/db/scope.ts":
        '/**\n * See docs/interface.md, "The feed", "Recover" and "Nowhere"; and docs/operations.md, "Erasing an\n * account" and "Gone".\n */\n// docs/interface.md, "Filters"\n',
    };
    assert.deepEqual(missingSections(Object.keys(texts), planted(texts)), [
      'src/db/scope.ts: docs/interface.md, "Nowhere"',
      'src/db/scope.ts: docs/operations.md, "Gone"',
    ]);
  });

  it("finds six repeated lines, and passes over blank lines, comments, brackets and import lists", () => {
    const six = ["const a = 1;", "const b = 2;", "", "// a note", "const c = 3;", "const d = 4;", "}", "const e = 5;", "const f = 6;"].join("\n");
    const five = ["const a = 1;", "const b = 2;", "const c = 3;", "const d = 4;", "const e = 5;"].join("\n");
    const imports = ["import {", "  a,", "  b,", "  c,", "  d,", "  e,", "  f,", '} from "./x";'].join("\n");
    const texts = { "src/one.ts": `${six}\n${imports}`, "src/two.ts": `let z = 0;\n${six}\n${imports}`, "src/three.ts": five, "src/four.ts": five };
    assert.deepEqual(repeatedRuns(Object.keys(texts), 6, planted(texts)), ["src/one.ts:1 = src/two.ts:2"]);
  });
});
