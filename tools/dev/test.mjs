// `npm test`: builds the assets once, runs the Worker's tests in the Workers runtime (vitest), then
// the end-to-end tests against the service as `npm start` runs it (node --test), the second even
// when the first is red, and ends with one line per half: what ran, what failed, how long it took.
// Extra arguments go to vitest (`npm test -- test/feed.test.ts` runs that file, then the e2e half);
// `--e2e` runs the second half alone (`npm run test:e2e`).
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { buildAssets } from "./build-assets.mjs";

const ENV = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
const REPORT = ".wrangler/vitest-report.json";

/** Runs a command with its output shown as it comes and kept; resolves with its exit code, output and seconds. */
function run(command, args) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: ENV, stdio: ["inherit", "pipe", "pipe"] });
    let output = "";
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ]) {
      from.on("data", (chunk) => {
        to.write(chunk);
        output += chunk;
      });
    }
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output, seconds: Math.round((Date.now() - started) / 1000) }));
  });
}

/**
 * The Node-side test files, named one by one: Node 20 takes a folder after --test, Node 22 and 24
 * take patterns and read a folder as a file.
 */
function nodeTestFiles() {
  return ["test/node", "test/e2e"].flatMap((dir) =>
    readdirSync(dir)
      .filter((name) => name.endsWith(".test.mjs"))
      .sort()
      .map((name) => `${dir}/${name}`),
  );
}

/** vitest's counts from its JSON report, or null when it wrote none (it did not get that far). */
function vitestCounts() {
  if (!existsSync(REPORT)) return null;
  const report = JSON.parse(readFileSync(REPORT, "utf8"));
  return { passed: report.numPassedTests, failed: report.numFailedTests, skipped: report.numPendingTests + report.numTodoTests };
}

/**
 * The failed tests named in vitest's JSON report, a line each with the first line of the failure:
 * CI keeps only the end of the output, and the summary is the end.
 */
function vitestFailures() {
  if (!existsSync(REPORT)) return [];
  const report = JSON.parse(readFileSync(REPORT, "utf8"));
  return report.testResults.flatMap((file) => {
    const where = file.name.replace(`${process.cwd()}/`, "");
    const failed = file.assertionResults.filter((test) => test.status === "failed");
    if (failed.length === 0 && file.status === "failed") return [`    ${where}: ${String(file.message).split("\n")[0]}`];
    return failed.map(
      (test) =>
        `    ${where} > ${test.fullName}: ${String(test.failureMessages?.[0] ?? "")
          .split("\n")[0]
          .slice(0, 300)}`,
    );
  });
}

/** node --test's counts from the lines its reporter ends with. */
function nodeCounts(output) {
  const count = (name) => Number(output.match(new RegExp(`^[^\\n]*\\b${name} (\\d+)$`, "m"))?.[1] ?? NaN);
  const counts = { passed: count("pass"), failed: count("fail"), skipped: count("skipped") };
  return Number.isNaN(counts.passed) ? null : counts;
}

const describe = (name, { code, seconds }, counts) => {
  const what = counts ? `${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ""}` : "no tests counted";
  return `  ${code === 0 ? "ok  " : "FAIL"}  ${name}: ${what} (${seconds} s${code === 0 ? "" : `, exit code ${code}`})`;
};

if (process.argv.includes("--e2e")) {
  const { code } = await run(process.execPath, ["--test", "--test-concurrency=1", ...nodeTestFiles()]);
  process.exit(code);
}
await buildAssets();
rmSync(REPORT, { force: true });
const vitest = await run("npx", [
  "--no-install",
  "vitest",
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${REPORT}`,
  ...process.argv.slice(2),
]);
const e2e = await run(process.execPath, ["--test", "--test-concurrency=1", ...nodeTestFiles()]);
console.log(
  [
    "",
    "npm test:",
    describe("the Worker's tests (vitest, Workers runtime)", vitest, vitestCounts()),
    ...vitestFailures(),
    describe("the end-to-end tests (node --test, against npm start)", e2e, nodeCounts(e2e.output)),
  ].join("\n"),
);
process.exit(vitest.code === 0 && e2e.code === 0 ? 0 : 1);
