import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { runCron } from "../../../src/cron";
import { createDb } from "../../../src/db/client";
import { foldPaymentCounts } from "../../../src/services/counts/payments";
import { PAYMENT_STATUSES } from "../../../src/db/schema";
import { call, wholeList, makeCounterparty, makeInvoice, makePayment, makeTenant, shardD1, writtenByTable, type User } from "../../helpers/api";

// A payment's counts are kept from a mark (services/counts/payments.ts): a change writes none, a read
// adds the changes after the mark, and a fold moves them into the stored rows. A list's count must
// be the same exact number whichever of the two holds a change.

type Row = { id: string; status: string; created: string; updated: string; originating_counterparty_id: string };

/** Every list whose count the stored rows answer (with the changes after the mark), and a few others, for an account's payments. */
function countedLists(all: Row[]): string[] {
  const instants = [...new Set(all.flatMap((row) => [row.created, row.updated]))].sort();
  const picks = [instants[0]!, instants[Math.floor(instants.length / 2)]!, instants[instants.length - 1]!];
  return [
    "",
    ...PAYMENT_STATUSES.map((status) => `status=${status}`),
    ...[...new Set(all.map((row) => row.originating_counterparty_id))].map((id) => `originating_counterparty_id=${id}`),
    ...picks.flatMap((at) => [
      `created__gte=${at}`,
      `created__lt=${at}`,
      `ordering=updated&updated__gt=${at}`,
      `updated__lte=${at}`,
      ...PAYMENT_STATUSES.map((status) => `status=${status}&created__gte=${at}`),
      `status=pending&created__lt=${at}`,
    ]),
  ];
}

/** What each list's count must be: its matches among all the account's payments. */
function expected(all: Row[], list: string): number {
  const filters = new URLSearchParams(list);
  return all.filter((row) =>
    [...filters].every(([name, value]) => {
      if (name === "ordering") return true;
      if (name === "status") return row.status === value;
      if (name === "originating_counterparty_id") return row.originating_counterparty_id === value;
      const [field, op] = name.split("__") as ["created" | "updated", string];
      const at = row[field];
      return op === "gt" ? at > value : op === "gte" ? at >= value : op === "lt" ? at < value : at <= value;
    }),
  ).length;
}

async function counts(client: User, lists: string[]): Promise<Record<string, number>> {
  const pairs = await Promise.all(
    lists.map(async (list) => {
      const res = await call("GET", `/v2/payments/?${list}&page_size=1`, { headers: client.headers });
      expect(res.status, list).toBe(200);
      return [list, res.json.count as number] as const;
    }),
  );
  return Object.fromEntries(pairs);
}

async function mark(accountId: string): Promise<number | null> {
  const d1 = await shardD1(accountId);
  const row = await d1
    .prepare("select counted_to from list_counts where account_id = ? and resource = 'payments'")
    .bind(accountId)
    .first<{ counted_to: number }>();
  return row?.counted_to ?? null;
}

describe("payment counts kept from a mark", () => {
  it("count every list exactly, with changes on both sides of the mark, before and after the cron folds them", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.UTC(2026, 2, 1, 9, 0, 0, 0);
    let now = t0;
    const at = (ms: number) => vi.setSystemTime((now = ms));
    try {
      at(t0);
      const { account, client, processor } = await makeTenant();
      const buyers = [await makeCounterparty(client, "buyer"), await makeCounterparty(client, "buyer")];
      const supplier = await makeCounterparty(client, "supplier");
      const made: string[] = [];
      // Steps shorter than FOLD_AFTER_MS leave changes after the mark; longer ones make the next
      // write ask for a fold. Creations, status changes and notes, across seconds, hours and days.
      const steps = [3, 2, 1_500, 4, 90_000, 1, 3 * 3_600_000, 5, 2, 86_400_000 + 7, 3, 600, 2 * 86_400_000];
      for (const [i, step] of steps.entries()) {
        at(now + step);
        if (i % 3 === 0 || made.length < 2) {
          made.push((await makePayment(client, { buyer: buyers[i % 2], supplier })).payment.id);
          continue;
        }
        const id = made[i % made.length]!;
        const body =
          i % 2 === 0
            ? { event_code: "PU15", description: "note" }
            : { event_code: "PX", description: "moved", status: ["in-progress", "settled"][i % 4 === 1 ? 0 : 1] };
        const res = await call("POST", `/v2/payments/${id}/events/`, { body, headers: processor.headers });
        // A payment already settled cannot move again: then it is a note.
        if (res.status !== 201)
          expect(
            (await call("POST", `/v2/payments/${id}/events/`, { body: { event_code: "PU15", description: "note" }, headers: processor.headers })).status,
          ).toBe(201);
      }
      // The last writes came within a second of each other: some changes are after the mark.
      at(now + 2);
      made.push((await makePayment(client, { buyer: buyers[0], supplier })).payment.id);
      await call("POST", `/v2/payments/${made[0]}/events/`, { body: { event_code: "PX", description: "fail", status: "failed" }, headers: processor.headers });
      vi.useRealTimers();

      const all = (await wholeList("/v2/payments/", client.headers)).json.results as Row[];
      expect(all).toHaveLength(made.length);
      const lists = countedLists(all);
      const truth = Object.fromEntries(lists.map((list) => [list, expected(all, list)]));
      const latest = Math.max(...all.map((row) => Date.parse(row.updated)));
      const before = await mark(account.id);
      expect(before).not.toBeNull();
      expect(before!).toBeLessThan(latest);
      expect(await counts(client, lists)).toEqual(truth);

      // The cron folds what no write asked to: the mark reaches the latest change, the counts stay.
      await runCron(env, Date.now());
      expect(await mark(account.id)).toBe(latest);
      expect(await counts(client, lists)).toEqual(truth);
    } finally {
      vi.useRealTimers();
    }
  });

  it("write no count row with a change, and count it in the next read", async () => {
    const { client, processor } = await makeTenant();
    const parties = { buyer: await makeCounterparty(client, "buyer"), supplier: await makeCounterparty(client, "supplier") };
    const bindings = { SERVER_TIMING: "true" };
    await makePayment(client, parties);
    const invoice = await makeInvoice(client, parties.buyer.id, parties.supplier.id);
    const made = await call("POST", "/v2/payments/", {
      body: { originating_counterparty_id: parties.buyer.id, receiving_counterparty_id: parties.supplier.id, invoice_ids: [invoice.id], payment_method: "ach" },
      headers: client.headers,
      bindings,
    });
    expect(made.status).toBe(201);
    const moved = await call("POST", `/v2/payments/${made.json.id}/events/`, {
      body: { event_code: "PU10", description: "Sent", status: "in-progress" },
      headers: processor.headers,
      bindings,
    });
    expect(moved.status).toBe(201);
    for (const res of [made, moved]) {
      const written = writtenByTable(res);
      expect(written.list_counts).toBeUndefined();
      expect(written.time_counts).toBeUndefined();
    }
    const count = async (list: string) => (await call("GET", `/v2/payments/?${list}`, { headers: client.headers })).json.count;
    expect([
      await count(""),
      await count("status=pending"),
      await count("status=in-progress"),
      await count(`receiving_counterparty_id=${parties.supplier.id}`),
    ]).toEqual([2, 1, 1, 2]);
  });

  it("fold once however many folds run at the same time", async () => {
    const { account, client } = await makeTenant();
    const parties = { buyer: await makeCounterparty(client, "buyer"), supplier: await makeCounterparty(client, "supplier") };
    for (let i = 0; i < 3; i++) await makePayment(client, parties);
    const d1 = await shardD1(account.id);
    const db = createDb(d1);
    const latest = (await d1.prepare("select max(updated_at) as at from payments where account_id = ?").bind(account.id).first<{ at: number }>())!.at;
    await Promise.all([
      foldPaymentCounts(db, account.id),
      foldPaymentCounts(db, account.id),
      foldPaymentCounts(db, account.id, latest + 1),
      foldPaymentCounts(db, account.id),
    ]);
    expect(await mark(account.id)).toBe(latest);
    const stored = await d1
      .prepare("select n, pending from list_counts where account_id = ? and resource = 'payments'")
      .bind(account.id)
      .first<{ n: number; pending: number }>();
    expect(stored).toEqual({ n: 3, pending: 3 });
    const receiving = await d1
      .prepare("select n from list_counts where account_id = ? and resource = ?")
      .bind(account.id, `payments/receiving_counterparty_id=${parties.supplier.id}`)
      .first<{ n: number }>();
    expect(receiving!.n).toBe(3);
    expect((await call("GET", "/v2/payments/", { headers: client.headers })).json.count).toBe(3);
  });
});
