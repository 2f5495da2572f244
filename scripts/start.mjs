// `npm start`: local secrets, migrations, demo data, then the Worker on 127.0.0.1 with its queue
// consumer and cron trigger. Everything runs embedded; no Cloudflare account is needed.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { demoSeedSql } from "./demo-seed.mjs";

const PORT = process.env.PORT ?? "8787";
const ENV = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
const wrangler = (args, options = {}) =>
  spawnSync("npx", ["--no-install", "wrangler", ...args], { stdio: "inherit", env: ENV, ...options });

function readDevVars() {
  if (!existsSync(".dev.vars")) {
    const secret = () => randomBytes(32).toString("base64url");
    writeFileSync(
      ".dev.vars",
      [
        "# Made by `npm start`; never commit. Delete it to get fresh secrets (and demo passwords).",
        `ADMIN_TOKEN="${secret()}"`,
        `ENCRYPTION_KEY="${randomBytes(32).toString("base64")}"`,
        `ALLOW_LOCAL_WEBHOOK_URLS="true"`,
        `DEMO_CLIENT_PASSWORD="${secret()}"`,
        `DEMO_PROCESSOR_PASSWORD="${secret()}"`,
        "",
      ].join("\n"),
      { mode: 0o600 },
    );
    console.log("Wrote .dev.vars with fresh secrets.");
  }
  const vars = {};
  for (const line of readFileSync(".dev.vars", "utf8").split("\n")) {
    const match = /^([A-Z_]+)\s*=\s*"?([^"]*)"?\s*$/.exec(line);
    if (match) vars[match[1]] = match[2];
  }
  return vars;
}

function run(step, result) {
  if (result.status !== 0) {
    console.error(`npm start: ${step} failed.`);
    process.exit(result.status ?? 1);
  }
}

const vars = readDevVars();
for (const name of ["ADMIN_TOKEN", "ENCRYPTION_KEY", "DEMO_CLIENT_PASSWORD", "DEMO_PROCESSOR_PASSWORD"]) {
  if (!vars[name]) {
    console.error(`npm start: .dev.vars has no ${name}; delete .dev.vars to have it made again.`);
    process.exit(1);
  }
}

run("applying migrations", wrangler(["d1", "migrations", "apply", "DB", "--local"], { input: "y\n", stdio: ["pipe", "inherit", "inherit"] }));
writeFileSync(".wrangler/demo-seed.sql", demoSeedSql(vars));
run("adding demo data", wrangler(["d1", "execute", "DB", "--local", "--file", ".wrangler/demo-seed.sql"], { stdio: ["ignore", "ignore", "inherit"] }));

const base = `http://127.0.0.1:${PORT}`;
console.log(`
Demo data is ready (account acct_demoAccount000000001).
  client:    demo-client    / ${vars.DEMO_CLIENT_PASSWORD}
  processor: demo-processor / ${vars.DEMO_PROCESSOR_PASSWORD}
  admin:     Authorization: Bearer ${vars.ADMIN_TOKEN}

Try:
  curl -u demo-client:${vars.DEMO_CLIENT_PASSWORD} ${base}/v2/payments/
  open ${base}/docs
`);

const dev = spawn(
  "npx",
  ["--no-install", "wrangler", "dev", "--ip", "127.0.0.1", "--port", PORT, "--test-scheduled", "--show-interactive-dev-session=false"],
  { stdio: "inherit", env: ENV },
);

// wrangler dev does not fire cron triggers by itself; fire the sweeper once a minute, as production does.
const cron = setInterval(() => {
  fetch(`${base}/__scheduled?cron=*+*+*+*+*`).catch(() => {});
}, 60_000);

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    clearInterval(cron);
    dev.kill(signal);
  });
}
dev.on("exit", (code) => {
  clearInterval(cron);
  process.exit(code ?? 0);
});
