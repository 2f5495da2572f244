import { UNKEYED, type Keyed, type KeyedWrite } from "../idempotency";
import { LARGEST_ROW_BYTES } from "../lib/list-bounds";
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { ServiceContext } from "../context";
import { runNamedBatch, type Db } from "../db/client";
import { isUniqueViolation } from "../db/errors";
import { guardedInsert } from "../db/guarded-insert";
import { counterparties, type CounterpartyType } from "../db/schema";
import { conflict, notFound } from "../errors";
import { newId } from "../lib/ids";
import type { PageRequest } from "../lib/pagination";
import { countingOf, countKey, countOne, storedCountQuery } from "./counts";
import { countWhere, listConditions, listTable } from "../db/list-page";
import { inAccount } from "../db/scope";
import { iso, jsonView } from "../db/json-view";

export type Counterparty = typeof counterparties.$inferSelect;

/** A counterparty as the API shows it. */
export const counterpartyView = jsonView(counterparties, {
  id: "id",
  internal_id: "internalId",
  type: "type",
  name: "name",
  created: iso("createdAt"),
  updated: iso("updatedAt"),
});

export interface CounterpartyFilters {
  type?: CounterpartyType[];
  internal_id?: string[];
}

const CLASH = "A counterparty with this internal_id and type already exists.";

export async function createCounterparty(
  { db, accountId }: ServiceContext,
  input: { internal_id: string; type: CounterpartyType; name: string },
  keyed: KeyedWrite<Counterparty> = UNKEYED,
): Promise<Keyed<Counterparty>> {
  const now = Date.now();
  const row: Counterparty = {
    id: newId("cpty"),
    accountId,
    internalId: input.internal_id,
    type: input.type,
    name: input.name,
    createdAt: now,
    updatedAt: now,
  };
  const made = sql`exists (select 1 from ${counterparties} where ${counterparties.id} = ${row.id})`;
  try {
    const batch = await runNamedBatch(db, {
      key: keyed.claim,
      insert: guardedInsert(db, counterparties, row, keyed.owns),
      count: countOne(db, accountId, countKey("counterparties"), made),
      countOfType: countOne(db, accountId, countKey("counterparties", "type", row.type), made),
      answer: await keyed.answer(row, made),
    });
    const decided = keyed.decided(batch.key);
    return decided ? { decided } : { ran: row };
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(CLASH);
    throw error;
  }
}

/** Whether `id` is the account's counterparty of `type`, as SQL: for a write's own batch to apply only when it holds. */
export function isCounterparty(accountId: string, id: string, type: CounterpartyType): SQL {
  return sql`exists (select 1 from ${counterparties} c where c.account_id = ${accountId} and c.id = ${id} and c.type = ${type})`;
}

/** Reads the account's counterparty `id`. */
export function selectCounterparty(db: Db, accountId: string, id: string) {
  return db
    .select()
    .from(counterparties)
    .where(and(inAccount(counterparties, accountId), eq(counterparties.id, id)));
}

export async function getCounterparty({ db, accountId }: ServiceContext, id: string): Promise<Counterparty> {
  const row = await selectCounterparty(db, accountId, id).get();
  if (!row) throw notFound();
  return row;
}

export async function updateCounterparty({ db, accountId }: ServiceContext, id: string, input: { name?: string; internal_id?: string }): Promise<Counterparty> {
  const changes: Partial<Counterparty> = { updatedAt: Date.now() };
  if (input.name !== undefined) changes.name = input.name;
  if (input.internal_id !== undefined) changes.internalId = input.internal_id;
  try {
    const [row] = await db
      .update(counterparties)
      .set(changes)
      .where(and(inAccount(counterparties, accountId), eq(counterparties.id, id)))
      .returning();
    if (!row) throw notFound();
    return row;
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(CLASH);
    throw error;
  }
}

export function listCounterparties({ db, accountId }: ServiceContext, filters: CounterpartyFilters, request: PageRequest) {
  const { where, anyOf } = listConditions(
    [inAccount(counterparties, accountId)],
    [
      { column: counterparties.internalId, values: filters.internal_id },
      { column: counterparties.type, values: filters.type },
    ],
  );
  const { count } = countingOf("counterparties", filters, { fields: [], sort: "created" });
  return listTable(
    db,
    counterparties,
    {
      largestRowBytes: LARGEST_ROW_BYTES.counterparties,
      // Each row's view, made by SQL: the page's rows come ready to send (with their keys, for links).
      fields: ["id", "createdAt"],
      made: { json: counterpartyView.json },
      where,
      anyOf,
      sort: counterparties.createdAt,
      id: counterparties.id,
      count: count.by === "stored" ? storedCountQuery(db, accountId, count.key) : countWhere(db, counterparties, where),
    },
    request,
  );
}
