/**
 * A new payment's checks (docs/interface.md, "Polling, payments and safe retries"), stated once
 * as named predicates. Each says what it requires of the rows a new payment reads, in TypeScript
 * (`holds`) and as the SQL the write's first statement requires (`sql`), and what it answers when
 * it fails (`refusal`). The payment is written only where every predicate's SQL holds
 * (`checksHoldSql`); a batch that did not write it reads every predicate's verdict back
 * (`verdictSql`) and answers the failing ones' refusals (`refusalOf`). The answer comes from the
 * SQL that refused the write, never from a second opinion, so a refused payment is a 400 or a
 * 409 by construction, never a 500. test/services/creation-checks.test.ts runs each predicate's
 * SQL against its TypeScript on the test pool's D1.
 */
import { sql, type SQL } from "drizzle-orm";
import { aliased } from "../../db/aliased";
import { counterparties, invoices, paymentInvoices } from "../../db/schema";
import { conflict, invalid, type AppError, type FieldErrors } from "../../errors";
import type { Counterparty } from "../counterparties";
import type { PaymentFields } from "./lifecycle";

type InvoiceRow = typeof invoices.$inferSelect;

/** What a new payment's checks look at: the request, and what the batch reads of the account for it. */
export interface CreationRead {
  input: PaymentFields;
  /** The account's counterparties named as buyer and supplier (undefined: none of the account's). */
  buyer: Counterparty | undefined;
  supplier: Counterparty | undefined;
  /** The account's invoices among those named. */
  found: InvoiceRow[];
  /** The named invoices that a live payment holds, and which. */
  live: { invoiceId: string; paymentId: string }[];
}

/** The account's invoices among those named, as the rows of a subquery (`named`: `from … where …`). */
export interface CreationSql {
  accountId: string;
  input: PaymentFields;
  /** The alias of invoices the `named` subquery reads. */
  i: typeof namedInvoices;
  named: SQL;
}

/** A refusal: a field's messages (a 400), or a conflict (a 409). */
type Refusal = { field: keyof PaymentFields; messages: string[] } | { conflict: string };

interface CreationCheck {
  holds(read: CreationRead): boolean;
  sql(q: CreationSql): SQL;
  refusal(read: CreationRead): Refusal;
}

const namedInvoices = aliased(invoices, "i");
const idsJson = (input: PaymentFields) => JSON.stringify(input.invoice_ids);

/** A counterparty of the account, of `type`, named by `field`. */
function counterpartyCheck(
  field: "originating_counterparty_id" | "receiving_counterparty_id",
  type: "buyer" | "supplier",
  of: (read: CreationRead) => Counterparty | undefined,
): CreationCheck {
  const role = field === "originating_counterparty_id" ? "originating" : "receiving";
  return {
    holds: (read) => of(read)?.type === type,
    sql: ({ accountId, input }) => {
      const c = aliased(counterparties, "c");
      return sql`exists (select 1 from ${c.from} where ${c.accountId} = ${accountId} and ${c.id} = ${input[field]} and ${c.type} = ${type})`;
    },
    refusal: (read) => ({
      field,
      messages: [of(read) ? `The ${role} counterparty must be a ${type}.` : `Invalid pk "${read.input[field]}" - object does not exist.`],
    }),
  };
}

export const CREATION_CHECKS = {
  /** The buyer is a counterparty of the account, of type buyer. */
  buyer: counterpartyCheck("originating_counterparty_id", "buyer", (read) => read.buyer),
  /** The supplier is a counterparty of the account, of type supplier. */
  supplier: counterpartyCheck("receiving_counterparty_id", "supplier", (read) => read.supplier),
  /** At least one invoice, none named twice. */
  distinct_invoices: {
    holds: ({ input }) => input.invoice_ids.length > 0 && new Set(input.invoice_ids).size === input.invoice_ids.length,
    sql: ({ input }) => sql`(select count(*) > 0 and count(distinct value) = count(*) from json_each(${idsJson(input)}))`,
    refusal: ({ input }) => ({
      field: "invoice_ids",
      messages: [input.invoice_ids.length === 0 ? "This list may not be empty." : "Each invoice may appear only once."],
    }),
  },
  /** Every invoice named is the account's, between the payment's buyer and supplier. */
  invoices_between: {
    holds: ({ input, found }) =>
      input.invoice_ids.every((id) =>
        found.some(
          (invoice) => invoice.id === id && invoice.buyerId === input.originating_counterparty_id && invoice.supplierId === input.receiving_counterparty_id,
        ),
      ),
    sql: ({ input, i, named }) =>
      sql`(select count(*) from ${named} and ${i.buyerId} = ${input.originating_counterparty_id} and ${i.supplierId} = ${input.receiving_counterparty_id}) = (select count(distinct value) from json_each(${idsJson(input)}))`,
    refusal: ({ input, found }) => {
      const byId = new Map(found.map((invoice) => [invoice.id, invoice]));
      const messages = input.invoice_ids.flatMap((id) => {
        const invoice = byId.get(id);
        if (!invoice) return [`Invalid pk "${id}" - object does not exist.`];
        if (invoice.buyerId !== input.originating_counterparty_id || invoice.supplierId !== input.receiving_counterparty_id)
          return [`Invoice ${id} is not between the payment's buyer and supplier.`];
        return [];
      });
      return {
        field: "invoice_ids",
        messages: messages.length > 0 ? messages : ["Every invoice must be the account's, between the payment's buyer and supplier."],
      };
    },
  },
  /** The invoices named that the account has are all in one currency. */
  one_currency: {
    holds: ({ found }) => new Set(found.map((invoice) => invoice.currency)).size <= 1,
    sql: ({ i, named }) => sql`(select count(distinct ${i.currency}) from ${named}) <= 1`,
    refusal: () => ({ field: "invoice_ids", messages: ["All invoices of a payment must have the same currency."] }),
  },
  /** No invoice named belongs to a live payment (one not canceled or failed). */
  no_live_link: {
    holds: ({ live }) => live.length === 0,
    sql: ({ input }) => {
      const l = aliased(paymentInvoices, "l");
      return sql`not exists (select 1 from json_each(${idsJson(input)}) j cross join ${l.from} where ${l.invoiceId} = j.value and ${l.releasedBy} = '')`;
    },
    refusal: ({ live }) => ({
      conflict: live[0] ? `Invoice ${live[0].invoiceId} already belongs to payment ${live[0].paymentId}.` : "An invoice already belongs to another payment.",
    }),
  },
} satisfies Record<string, CreationCheck>;

export type CreationCheckName = keyof typeof CREATION_CHECKS;
const NAMES = Object.keys(CREATION_CHECKS) as CreationCheckName[];

/** The SQL context of the checks for `input` in `accountId`. */
export function creationSql(accountId: string, input: PaymentFields): CreationSql {
  const i = namedInvoices;
  // Found by their ids (the unary + keeps SQLite from walking the account's invoices in created order instead).
  const named = sql`${i.from} where ${i.id} in (select value from json_each(${idsJson(input)})) and +${i.accountId} = ${accountId}`;
  return { accountId, input, i, named };
}

/** Whether every check holds, as SQL: the new payment's write condition. */
export function checksHoldSql(q: CreationSql): SQL {
  return sql.join(
    NAMES.map((name) => sql`(${CREATION_CHECKS[name].sql(q)})`),
    sql` and `,
  );
}

/**
 * Each check's verdict, as the columns of a select (1 or 0 each, named for its check: D1 answers a
 * row by column names, and two checks' SQL may read alike).
 */
export function verdictSql(q: CreationSql): Record<CreationCheckName, SQL.Aliased<number>> {
  return Object.fromEntries(NAMES.map((name) => [name, sql<number>`(${CREATION_CHECKS[name].sql(q)})`.mapWith(Number).as(name)])) as Record<
    CreationCheckName,
    SQL.Aliased<number>
  >;
}

/** The verdict when nothing was read back (the account has no row on this shard): every check failed. */
export const NO_VERDICT = Object.fromEntries(NAMES.map((name) => [name, 0])) as Record<CreationCheckName, number>;

/** Each check's verdict in TypeScript. Pure. */
export function verdictOf(read: CreationRead): Record<CreationCheckName, boolean> {
  return Object.fromEntries(NAMES.map((name) => [name, CREATION_CHECKS[name].holds(read)])) as Record<CreationCheckName, boolean>;
}

/**
 * What a payment refused by the checks that failed (`verdict`, 0 for each) answers: every failing
 * field's messages (a 400), or, when only the live-link check failed, its 409. Invoice checks past a
 * list that names an invoice twice say nothing more. Pure.
 */
export function refusalOf(verdict: Record<CreationCheckName, number | boolean>, read: CreationRead): AppError {
  const failing = NAMES.filter((name) => !verdict[name]);
  const shown = failing.includes("distinct_invoices")
    ? failing.filter((name) => name !== "invoices_between" && name !== "one_currency")
    : failing.includes("invoices_between")
      ? failing.filter((name) => name !== "one_currency")
      : failing;
  const errors: FieldErrors = {};
  let conflicting: string | null = null;
  for (const name of shown) {
    const refusal = CREATION_CHECKS[name].refusal(read);
    if ("conflict" in refusal) conflicting ??= refusal.conflict;
    else errors[refusal.field] = [...(errors[refusal.field] ?? []), ...refusal.messages];
  }
  if (Object.keys(errors).length > 0) return invalid(errors);
  return conflict(conflicting ?? "The payment could not be made.");
}
