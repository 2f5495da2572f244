// Seeds a local D1 state for the benchmark: one account with `scale` invoices, scale/10
// counterparties (half buyers, half suppliers), scale/10 payments (one invoice each, with their
// events) and the counters the schema keeps, consistent with what the API writes.
//
//   npm run bench:seed -- --scale 1000000 --persist-to .bench/state-1000000
//
// Everything is generated inside SQLite by recursive CTEs, so 1,000,000 invoices take seconds.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { migrateAll, wranglerSync } from "../lib/d1.mjs";
import { paymentDetailSql, recountSql } from "../lib/sql.mjs";

// 6: a directory and shards (the account's rows on shard A). 7: the payment detail carries `version`.
// 8: invoice links keyed by their invoice; a pending payment has a note at its `updated`.
export const SEED_VERSION = 9;
export const ACCOUNT = "acct_benchAccount0000000001";
/** The shard the bench account lives on. */
export const SHARD = "A";
export const USERS = {
  client: { username: "bench-client", password: "bench-client-password-local-only" },
  processor: { username: "bench-processor", password: "bench-processor-password-local-only" },
};
/** 2026-01-01T00:00:00Z: rows are stamped from here, invoices 10 ms apart. */
export const T0 = Date.UTC(2026, 0, 1);
export const PAYMENT_STATUSES = ["pending", "in-progress", "settled", "failed"];

/** What the seeded data holds at a scale, for the scenarios' filters. */
export function shape(scale) {
  const counterparties = Math.max(2, Math.floor(scale / 10));
  const payments = Math.max(1, Math.floor(scale / 10));
  return {
    scale,
    invoices: scale,
    counterparties,
    buyers: Math.floor(counterparties / 2),
    payments,
    invoiceAt: (i) => T0 + i * 10,
    /** Payments are updated after every invoice exists, 10 ms apart, in payment order. */
    paymentUpdatedAt: (p) => T0 + scale * 10 + 1000 + p * 10,
    buyerId: (n) => `cpty_b${String(n).padStart(20, "0")}`,
    supplierId: (n) => `cpty_s${String(n).padStart(20, "0")}`,
    paymentId: (p) => `pmt_${String(p).padStart(22, "0")}`,
  };
}

const sha256 = (text) => createHash("sha256").update(text).digest("hex");

/** The directory's part: the account, on SHARD, and its users. */
export function directorySql() {
  return (
    [
      `INSERT INTO accounts (id, name, created_at, shard) VALUES ('${ACCOUNT}', 'Bench Payables Inc.', ${T0}, '${SHARD}');`,
      ...Object.entries(USERS).map(
        ([role, user]) =>
          `INSERT INTO api_users (username, account_id, role, password_hash, created_at) VALUES ('${user.username}', '${ACCOUNT}', '${role}', '${sha256(user.password)}', ${T0});`,
      ),
    ].join("\n") + "\n"
  );
}

/** The shard's part: the account's data. */
export function seedSql(scale) {
  const s = shape(scale);
  const half = s.buyers;
  const seq = (count) => `WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < ${count - 1})`;
  // Payment p pays invoice p; its status cycles through four, and its events follow the lifecycle.
  const status = `CASE n % 4 WHEN 0 THEN 'pending' WHEN 1 THEN 'in-progress' WHEN 2 THEN 'settled' ELSE 'failed' END`;
  const version = `CASE n % 4 WHEN 0 THEN 2 WHEN 1 THEN 2 WHEN 2 THEN 3 ELSE 2 END`;
  return (
    [
      `INSERT INTO tenants (id, created_at) VALUES ('${ACCOUNT}', ${T0});`,
      `${seq(half)} INSERT INTO counterparties SELECT printf('cpty_b%020d', n), '${ACCOUNT}', 'BUY-' || n, 'buyer', 'Buyer ' || n, ${T0 - 3_600_000} + n, ${T0 - 3_600_000} + n FROM seq;`,
      `${seq(half)} INSERT INTO counterparties SELECT printf('cpty_s%020d', n), '${ACCOUNT}', 'SUP-' || n, 'supplier', 'Supplier ' || n, ${T0 - 1_800_000} + n, ${T0 - 1_800_000} + n FROM seq;`,
      `${seq(s.invoices)} INSERT INTO invoices SELECT printf('inv_%022d', n), '${ACCOUNT}', 'INV-' || n, printf('cpty_b%020d', n % ${half}), printf('cpty_s%020d', n % ${half}), 100 + n % 100000, 'USD', ${T0} + n * 10, ${T0} + n * 10 FROM seq;`,
      `${seq(s.payments)} INSERT INTO payments SELECT printf('pmt_%022d', n), '${ACCOUNT}', printf('cpty_b%020d', n % ${half}), printf('cpty_s%020d', n % ${half}), 100 + n % 100000, 'USD',
       CASE n % 3 WHEN 0 THEN 'ach' WHEN 1 THEN 'wire' ELSE 'check' END, ${status},
       CASE WHEN n % 4 = 0 THEN NULL ELSE 'TR-' || n END, NULL, ${version}, 'seed-' || n, ${T0} + n * 10 + 5, ${T0 + s.invoices * 10 + 1000} + n * 10, NULL FROM seq;`,
      `${seq(s.payments)} INSERT INTO payment_invoices (invoice_id, released_by, payment_id) SELECT printf('inv_%022d', n), CASE WHEN n % 4 = 3 THEN printf('pmt_%022d', n) ELSE '' END, printf('pmt_%022d', n) FROM seq;`,
      // Each link carries its invoice's number, amount and created, as the payment write copies them.
      `UPDATE payment_invoices SET invoice_number = i.invoice_number, amount_cents = i.amount_cents, invoice_created_at = i.created_at FROM invoices i WHERE i.id = payment_invoices.invoice_id;`,
      `${seq(s.payments)} INSERT INTO payment_events (id, payment_id, seq, event_code, status, description, created_at, instrument_number, refund_reason) SELECT printf('pev_%020d01', n), printf('pmt_%022d', n), 1, 'PU00', 'pending', 'Payment created', ${T0} + n * 10 + 5, NULL, NULL FROM seq;`,
      `${seq(s.payments)} INSERT INTO payment_events (id, payment_id, seq, event_code, status, description, created_at, instrument_number, refund_reason) SELECT printf('pev_%020d02', n), printf('pmt_%022d', n), 2, CASE WHEN n % 4 = 3 THEN 'PU90' ELSE 'PU10' END,
       CASE WHEN n % 4 = 3 THEN 'failed' ELSE 'in-progress' END, 'Moved on', ${T0 + s.invoices * 10 + 1000} + n * 10, 'TR-' || n, NULL FROM seq WHERE n % 4 <> 0;`,
      // A pending payment's note at its `updated`: a payment's last event carries its `updated` (the
      // payment counts' moves of `updated` start from it: src/services/counts/payments.ts).
      `${seq(s.payments)} INSERT INTO payment_events (id, payment_id, seq, event_code, status, description, created_at, instrument_number, refund_reason) SELECT printf('pev_%020d02', n), printf('pmt_%022d', n), 2, 'PU05', 'pending', 'Noted', ${T0 + s.invoices * 10 + 1000} + n * 10, NULL, NULL FROM seq WHERE n % 4 = 0;`,
      `${seq(s.payments)} INSERT INTO payment_events (id, payment_id, seq, event_code, status, description, created_at, instrument_number, refund_reason) SELECT printf('pev_%020d03', n), printf('pmt_%022d', n), 3, 'PU20', 'settled', 'Settled', ${T0 + s.invoices * 10 + 1000} + n * 10, 'TR-' || n, NULL FROM seq WHERE n % 4 = 2;`,
      paymentDetailSql(),
      recountSql(ACCOUNT),
    ].join("\n") + "\n"
  );
}

/** Makes `dir` hold the seeded state at `scale`, unless it already does. Returns the time taken (0 if reused). */
export function ensureSeeded(scale, dir) {
  const marker = join(dir, "bench-seed.json");
  const migrate = () => {
    const failed = migrateAll({ persistTo: dir });
    if (failed.length > 0) throw new Error(`bench:seed: migrating ${dir} failed:\n${failed.map((f) => `${f.binding}: ${f.output}`).join("\n")}`);
  };
  if (existsSync(marker)) {
    const seeded = JSON.parse(readFileSync(marker, "utf8"));
    if (seeded.scale === scale && seeded.version === SEED_VERSION) {
      migrate(); // reused data gets the migrations written since it was seeded
      return 0;
    }
  }
  const started = Date.now();
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  migrate();
  for (const [binding, sql] of [
    [`SHARD_${SHARD}`, seedSql(scale)],
    ["DB", directorySql()],
  ]) {
    const file = resolve(dir, `seed-${binding}.sql`);
    writeFileSync(file, sql);
    const result = wranglerSync(["d1", "execute", binding, "--local", "--persist-to", dir, "--file", file]);
    if (result.status !== 0) throw new Error(`bench:seed: seeding ${binding} failed:\n${result.stdout}${result.stderr}`);
  }
  writeFileSync(marker, JSON.stringify({ scale, version: SEED_VERSION, seeded_at: new Date().toISOString() }));
  return Date.now() - started;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { scale: { type: "string", default: "1000000" }, "persist-to": { type: "string" } } });
  const scale = Number(values.scale);
  if (!Number.isInteger(scale) || scale < 100) throw new Error("--scale must be an integer of at least 100");
  const dir = values["persist-to"] ?? `.bench/state-${scale}`;
  const ms = ensureSeeded(scale, dir);
  console.log(ms ? `Seeded ${scale.toLocaleString("en")} invoices into ${dir} in ${(ms / 1000).toFixed(1)} s.` : `${dir} already holds scale ${scale}.`);
}
