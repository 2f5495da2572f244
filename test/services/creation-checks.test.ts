import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { inList } from "../../src/db/in-list";
import { counterparties, liveLink, invoices, paymentInvoices, tenants } from "../../src/db/schema";
import {
  CREATION_CHECKS,
  creationSql,
  refusalOf,
  verdictOf,
  verdictSql,
  type CreationCheckName,
  type CreationRead,
} from "../../src/services/payments/creation";
import type { PaymentFields } from "../../src/services/payments/lifecycle";
import { call, makeCounterparty, makeInvoice, makeTenant, type User } from "../helpers/api";

/**
 * A new payment's checks (src/services/payments/creation.ts): each predicate's SQL, run on the
 * test pool's D1 as the payment's batch runs it, says what its TypeScript says of the rows that
 * batch reads, case by case, with no HTTP in between; and a refusal built from the SQL's verdict
 * is always a 400 or a 409.
 */
const db = () => createDb(env.SHARD_A!);
let client: User;
let accountId: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
  const tenant = await makeTenant({ shard: "A" });
  client = tenant.client;
  accountId = tenant.account.id;
  const other = await makeTenant({ shard: "A" });
  const [buyer, supplier, otherSupplier] = [
    await makeCounterparty(client, "buyer"),
    await makeCounterparty(client, "supplier"),
    await makeCounterparty(client, "supplier"),
  ];
  const foreignBuyer = await makeCounterparty(other.client, "buyer");
  const foreignSupplier = await makeCounterparty(other.client, "supplier");
  Object.assign(ids, { buyer: buyer.id, supplier: supplier.id, otherSupplier: otherSupplier.id });
  ids.usd1 = (await makeInvoice(client, buyer.id, supplier.id)).id;
  ids.usd2 = (await makeInvoice(client, buyer.id, supplier.id)).id;
  ids.eur = (await makeInvoice(client, buyer.id, supplier.id, { currency: "EUR" })).id;
  ids.otherPair = (await makeInvoice(client, buyer.id, otherSupplier.id)).id;
  ids.foreign = (await makeInvoice(other.client, foreignBuyer.id, foreignSupplier.id)).id;
  // One invoice in a live payment, one let go by a payment that failed.
  ids.live = (await makeInvoice(client, buyer.id, supplier.id)).id;
  ids.released = (await makeInvoice(client, buyer.id, supplier.id)).id;
  const pay = (invoice: string) =>
    call("POST", "/v2/payments/", {
      body: { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice], payment_method: "ach" },
      headers: client.headers,
    });
  expect((await pay(ids.live!)).status).toBe(201);
  const failed = await pay(ids.released!);
  expect(
    (
      await call("POST", `/v2/payments/${failed.json.id}/events/`, {
        body: { event_code: "PU90", description: "Rejected", status: "failed" },
        headers: tenant.processor.headers,
      })
    ).status,
  ).toBe(201);
});

/** What the payment's batch reads for its checks (new-payment.ts), read the same way. */
async function readFor(input: PaymentFields): Promise<CreationRead> {
  const d = db();
  const one = (id: string) =>
    d
      .select()
      .from(counterparties)
      .where(and(eq(counterparties.accountId, accountId), eq(counterparties.id, id)));
  return {
    input,
    buyer: (await one(input.originating_counterparty_id))[0],
    supplier: (await one(input.receiving_counterparty_id))[0],
    found: await d
      .select()
      .from(invoices)
      .where(and(eq(invoices.accountId, accountId), inList(invoices.id, input.invoice_ids))),
    live: await d
      .select({ invoiceId: paymentInvoices.invoiceId, paymentId: paymentInvoices.paymentId })
      .from(paymentInvoices)
      .where(and(inList(paymentInvoices.invoiceId, input.invoice_ids), liveLink)),
  };
}

type Case = [string, () => Partial<PaymentFields>, CreationCheckName[], number];
const CASES: Case[] = [
  ["every check holds", () => ({}), [], 0],
  ["two invoices in one currency", () => ({ invoice_ids: [ids.usd1!, ids.usd2!] }), [], 0],
  ["a buyer the account does not have", () => ({ originating_counterparty_id: "cpty_missing" }), ["buyer", "invoices_between"], 400],
  ["a supplier as the buyer", () => ({ originating_counterparty_id: ids.supplier! }), ["buyer", "invoices_between"], 400],
  [
    "the roles swapped",
    () => ({ originating_counterparty_id: ids.supplier!, receiving_counterparty_id: ids.buyer! }),
    ["buyer", "supplier", "invoices_between"],
    400,
  ],
  ["an invoice named twice", () => ({ invoice_ids: [ids.usd1!, ids.usd1!] }), ["distinct_invoices"], 400],
  ["an invoice that does not exist", () => ({ invoice_ids: ["inv_missing"] }), ["invoices_between"], 400],
  ["an invoice of another account", () => ({ invoice_ids: [ids.foreign!] }), ["invoices_between"], 400],
  ["an invoice between other counterparties", () => ({ invoice_ids: [ids.usd1!, ids.otherPair!] }), ["invoices_between"], 400],
  ["two currencies", () => ({ invoice_ids: [ids.usd1!, ids.eur!] }), ["one_currency"], 400],
  ["an invoice a live payment holds", () => ({ invoice_ids: [ids.usd1!, ids.live!] }), ["no_live_link"], 409],
  ["an invoice a failed payment let go", () => ({ invoice_ids: [ids.released!] }), [], 0],
  [
    "a live link and a missing buyer",
    () => ({ originating_counterparty_id: "cpty_missing", invoice_ids: [ids.live!] }),
    ["buyer", "invoices_between", "no_live_link"],
    400,
  ],
];

describe("a new payment's checks, SQL against TypeScript", () => {
  it.each(CASES)("%s", async (_name, change, failing, status) => {
    const input: PaymentFields = {
      originating_counterparty_id: ids.buyer!,
      receiving_counterparty_id: ids.supplier!,
      invoice_ids: [ids.usd1!],
      payment_method: "ach",
      ...change(),
    };
    const [sqlVerdict] = await db()
      .select(verdictSql(creationSql(accountId, input)))
      .from(tenants)
      .where(eq(tenants.id, accountId));
    const read = await readFor(input);
    const tsVerdict = verdictOf(read);
    const names = Object.keys(CREATION_CHECKS) as CreationCheckName[];
    expect(Object.fromEntries(names.map((name) => [name, Boolean(sqlVerdict![name])]))).toEqual(tsVerdict);
    expect(names.filter((name) => !tsVerdict[name])).toEqual(failing);
    if (failing.length > 0) expect(refusalOf(sqlVerdict!, read).status).toBe(status);
  });

  it("answers a 400 or a 409 whatever the verdict says, never anything else", () => {
    const names = Object.keys(CREATION_CHECKS) as CreationCheckName[];
    const read: CreationRead = {
      input: { originating_counterparty_id: "a", receiving_counterparty_id: "b", invoice_ids: ["i"], payment_method: "ach" },
      buyer: undefined,
      supplier: undefined,
      found: [],
      live: [],
    };
    for (let bits = 0; bits < 2 ** names.length; bits++) {
      const verdict = Object.fromEntries(names.map((name, i) => [name, (bits >> i) & 1])) as Record<CreationCheckName, number>;
      expect([400, 409]).toContain(refusalOf(verdict, read).status);
    }
  });
});
