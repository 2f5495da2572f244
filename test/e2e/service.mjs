// Runs `npm start` as a newcomer would, in a fresh copy of the project (its own .dev.vars and local
// D1 state, node_modules shared), on a free port of 127.0.0.1. Used by the Node-side end-to-end tests.
import { spawn } from "node:child_process";
import { stopGroup } from "../../scripts/process-group.mjs";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
const PROJECT_FILES = ["package.json", "wrangler.toml", "tsconfig.json", "src", "scripts", "migrations", "console"];

export function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

/** A fresh copy of the project in a temporary folder. */
export function freshCopy() {
  const dir = mkdtempSync(join(tmpdir(), "payments-e2e-"));
  for (const name of PROJECT_FILES) cpSync(join(ROOT, name), join(dir, name), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs `node scripts/start.mjs` in `dir`; resolves once /healthz answers, with its output so far. */
export async function startService(dir, port) {
  const child = spawn(process.execPath, ["scripts/start.mjs"], {
    cwd: dir,
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      stopGroup(child);
      throw new Error(`npm start did not answer /healthz in 90 s:\n${output}`);
    }
    const ok = await fetch(`${base}/healthz`).then((res) => res.ok, () => false);
    if (ok) break;
    await new Promise((done) => setTimeout(done, 250));
  }
  const vars = Object.fromEntries(
    readFileSync(join(dir, ".dev.vars"), "utf8")
      .split("\n")
      .map((line) => /^([A-Z_]+)="?([^"]*)"?$/.exec(line))
      .filter(Boolean)
      .map((match) => [match[1], match[2]]),
  );
  return { base, vars, output: () => output, stop: () => stopGroup(child) };
}

/** Runs a command to its end; resolves with its exit code and output. */
export function run(command, args, options = {}) {
  return new Promise((done) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("exit", (code) => done({ code, stdout, stderr }));
  });
}

export const ARTIFACTS = join(ROOT, "artifacts");
