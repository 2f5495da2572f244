import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { createDb } from "../../src/db/client";
import worker from "../../src/index";
import { countAt } from "../../src/services/counts";

export const BASE = "https://payments.test";
export const ADMIN = { authorization: `Bearer ${env.ADMIN_TOKEN}` };

export interface User {
  username: string;
  password: string;
  accountId: string;
  headers: Record<string, string>;
}

let counter = 0;
/** A unique suffix per call, so tests never share rows. */
export function unique(label = "x"): string {
  counter += 1;
  return `${label}-${Date.now().toString(36)}-${counter}-${crypto.randomUUID().slice(0, 8)}`;
}

export function basic(username: string, password: string): string {
  return `Basic ${btoa(`${username}:${password}`)}`;
}

/**
 * A request to the Worker's own `fetch`, in this Workers runtime, then waits for its
 * `waitUntil` work. (SELF.fetch got slower with every call in a file: 10x after a few hundred.)
 * A plain object body is sent as JSON; `bindings` replace the Worker's bindings for this request.
 */
export async function call(method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; bindings?: Partial<typeof env> } = {}) {
  const headers: Record<string, string> = { ...options.headers };
  let body: BodyInit | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(`${BASE}${path}`, { method, headers, body }), { ...env, ...options.bindings }, ctx);
  await waitOnExecutionContext(ctx);
  const text = await response.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  return { status: response.status, headers: response.headers, json };
}

/** The name of the shard that holds an account's data, as the directory says. */
export async function shardOf(accountId: string): Promise<string> {
  const row = await env.DB.prepare("select shard from accounts where id = ?").bind(accountId).first<{ shard: string }>();
  if (!row) throw new Error(`no account ${accountId}`);
  return row.shard;
}

/** The D1 binding of the shard that holds an account's data. */
export async function shardD1(accountId: string): Promise<D1Database> {
  const binding = env[`SHARD_${await shardOf(accountId)}`];
  if (!binding) throw new Error(`no shard binding for account ${accountId}`);
  return binding;
}

/** Bindings for one request that put a double of the account's shard in place of its binding. */
export async function onShard(accountId: string, double: (d1: D1Database) => D1Database): Promise<Partial<typeof env>> {
  const name = `SHARD_${await shardOf(accountId)}` as const;
  return { [name]: double(env[name]!) };
}

export async function makeAccount(name = unique("account"), shard?: string): Promise<{ id: string; name: string; shard: string }> {
  const res = await call("POST", "/admin/accounts/", { body: { name, shard }, headers: ADMIN });
  if (res.status !== 201) throw new Error(`account: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

export async function makeUser(accountId: string, role: "client" | "processor" = "client"): Promise<User> {
  const username = unique(role);
  const res = await call("POST", `/admin/accounts/${accountId}/api-users/`, { body: { username, role }, headers: ADMIN });
  if (res.status !== 201) throw new Error(`user: ${res.status} ${JSON.stringify(res.json)}`);
  return { username, password: res.json.password, accountId, headers: { authorization: basic(username, res.json.password) } };
}

/** An account with a client and a processor; on the shard named, else where the service places it. */
export async function makeTenant({ shard }: { shard?: string } = {}) {
  const account = await makeAccount(undefined, shard);
  const [client, processor] = await Promise.all([makeUser(account.id, "client"), makeUser(account.id, "processor")]);
  return { account, client, processor };
}

export async function makeCounterparty(user: User, type: "buyer" | "supplier", fields: Record<string, unknown> = {}) {
  const res = await call("POST", "/v1/counterparties/", {
    body: { internal_id: unique(type), type, name: `${type} ${unique()}`, ...fields },
    headers: user.headers,
  });
  if (res.status !== 201) throw new Error(`counterparty: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

export async function makeInvoice(user: User, buyerId: string, supplierId: string, fields: Record<string, unknown> = {}) {
  const res = await call("POST", "/v1/invoices/", {
    body: { invoice_number: unique("INV"), buyer_id: buyerId, supplier_id: supplierId, amount_cents: 1250, ...fields },
    headers: user.headers,
  });
  if (res.status !== 201) throw new Error(`invoice: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

/** A tenant with a buyer, a supplier, and a fresh pending payment over one invoice. */
export async function makePayment(user: User, parties?: { buyer: any; supplier: any }, method = "ach") {
  const buyer = parties?.buyer ?? (await makeCounterparty(user, "buyer"));
  const supplier = parties?.supplier ?? (await makeCounterparty(user, "supplier"));
  const invoice = await makeInvoice(user, buyer.id, supplier.id);
  const res = await call("POST", "/v2/payments/", {
    body: {
      originating_counterparty_id: buyer.id,
      receiving_counterparty_id: supplier.id,
      invoice_ids: [invoice.id],
      payment_method: method,
    },
    headers: user.headers,
  });
  if (res.status !== 201) throw new Error(`payment: ${res.status} ${JSON.stringify(res.json)}`);
  return { payment: res.json, buyer, supplier, invoice };
}

/** Inserts an invoice with a chosen `created`, for boundary tests (the API stamps the clock). */
export async function insertInvoiceAt(accountId: string, buyerId: string, supplierId: string, createdIso: string, invoiceNumber = unique("INV")) {
  const id = `inv_${crypto.randomUUID().replace(/-/g, "").slice(0, 22)}`;
  const ms = Date.parse(createdIso);
  const db = await shardD1(accountId);
  await db.batch([
    db
      .prepare(
        "insert into invoices (id, account_id, invoice_number, buyer_id, supplier_id, amount_cents, currency, created_at, updated_at) values (?, ?, ?, ?, ?, 100, 'USD', ?, ?)",
      )
      .bind(id, accountId, invoiceNumber, buyerId, supplierId, ms, ms),
    db.prepare("insert into list_counts (account_id, resource, n) values (?, 'invoices', 1) on conflict do update set n = n + 1").bind(accountId),
  ]);
  // What createInvoice's batch also keeps: the time buckets that count created ranges.
  await countAt(createDb(db), accountId, "invoices.created_at", ms, { n: 1 });
  return id;
}

export const ids = (res: { json: { results: { id: string }[] } }) => res.json.results.map((row) => row.id);

/**
 * A whole list, page after page by its `next` links (a page holds at most its list's maximum
 * `page_size`: lib/list-bounds.ts), as one answer: its status, its count and every row.
 */
export async function wholeList(path: string, headers: Record<string, string>): Promise<{ status: number; json: { count: number; results: any[] } }> {
  const results: any[] = [];
  let next: string | null = `${BASE}${path}`;
  let count = 0;
  for (let page = 0; next !== null && page < 10_000; page++) {
    const res = await call("GET", next.slice(BASE.length), { headers });
    if (res.status !== 200) return res;
    results.push(...res.json.results);
    count = res.json.count;
    next = res.json.next;
  }
  return { status: 200, json: { count, results } };
}

/** The Server-Timing header's D1 rows written by table (SERVER_TIMING on); a table it did not write is absent. */
export function writtenByTable(res: { headers: Headers }): Record<string, number> {
  const listed = /d1-written-by-table;desc="([^"]*)"/.exec(res.headers.get("server-timing") ?? "")?.[1] ?? "";
  return Object.fromEntries(
    listed
      .split(" ")
      .filter(Boolean)
      .map((pair) => pair.split(":"))
      .map(([table, n]) => [table!, Number(n)]),
  );
}

/** The Server-Timing header's D1 figures (SERVER_TIMING on): counts, and D1's SQL time in ms. */
export function d1Timing(res: { headers: Headers }) {
  const header = res.headers.get("server-timing") ?? "";
  const value = (name: string, key: "desc" | "dur") => {
    const match = new RegExp(`${name};${key}="?([0-9.]+)"?`).exec(header);
    return match ? Number(match[1]) : NaN;
  };
  return {
    rowsRead: value("d1-rows-read", "desc"),
    rowsWritten: value("d1-rows-written", "desc"),
    statements: value("d1-statements", "desc"),
    calls: value("d1-calls", "desc"),
    sqlMs: value("d1-sql", "dur"),
  };
}
