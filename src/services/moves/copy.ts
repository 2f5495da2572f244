/**
 * Copying an account's rows from one shard to another, on the D1 bindings themselves (the cron's
 * primaries), upserted by primary key, so a row copied twice is simply written again, stamps and
 * all, as it was.
 *
 * Within D1's limits by construction (lib/platform-limits.ts): a chunk is at most COPY_CHUNK rows
 * and COPY_READ_BYTES of values (its rows' sizes are read first, on the table's key; a row larger
 * than that goes alone), so no read comes near D1's result size; rows travel as one JSON value per
 * statement up to COPY_VALUE_BYTES, and a row whose JSON is larger is written with each column
 * bound apart (a value is never larger than D1's 2 MB row). Column names come from the schema,
 * not from `pragma_table_info()`.
 */
import { getTableColumns, getTableName, isTable, type Table } from "drizzle-orm";
import { withinBytes } from "../../lib/within-bytes";
import { runNamedD1Batch } from "../../db/client";
import * as shard from "../../db/schema/shard";
import { D1_MAX_BOUND_PARAMETERS, D1_MAX_RESULT_BYTES, D1_MAX_VALUE_BYTES } from "../../lib/platform-limits";
import { MOVED_TABLES, type MovedTable } from "./tables";

/** Rows one statement reads or writes at most. */
export const COPY_CHUNK = 100;
/** Bytes of values one chunk reads at most: a tenth of D1's largest result. */
export const COPY_READ_BYTES = D1_MAX_RESULT_BYTES / 10;
/** Bytes of the JSON one statement binds at most: half of D1's largest value, for room. */
export const COPY_VALUE_BYTES = D1_MAX_VALUE_BYTES / 2;

type Row = Record<string, unknown>;
const quoted = (column: string) => `"${column}"`;

/** Each moved table's columns, from the shard's schema. */
const COLUMNS: ReadonlyMap<string, string[]> = new Map(
  (Object.values(shard) as unknown[])
    .filter((value): value is Table => isTable(value))
    .map((table) => [getTableName(table), Object.values(getTableColumns(table)).map((column) => column.name)]),
);

export function columnsOf(table: MovedTable): string[] {
  const columns = COLUMNS.get(table.name);
  if (!columns) throw new Error(`moves: no schema for table ${table.name}`);
  if (columns.length + 1 > D1_MAX_BOUND_PARAMETERS) throw new Error(`moves: ${table.name} has more columns than D1 binds in one statement`);
  return columns;
}

/** SQL for the bytes of a row's values (their text or blob length; numbers as text). */
function rowBytes(table: MovedTable): string {
  return columnsOf(table)
    .map((column) => `coalesce(length(cast(${quoted(column)} as blob)), 0)`)
    .join(" + ");
}

/** Where the bulk copy of a table stands: the last rowid copied, or a WITHOUT ROWID table's last key (0 before its first row). */
export type CopyCursor = number | unknown[];

/**
 * One chunk of a table's rows of the account, after `after`, upserted into `to`: in rowid order up
 * to `upTo` (the highest rowid when the move's triggers came on), or a WITHOUT ROWID table in key
 * order to its end (a row written since is copied as it is now, and its logged change is applied
 * after the bulk copy, so copying it early changes nothing). The chunk ends where its rows reach
 * COPY_READ_BYTES, after its first row at least.
 */
export async function copyChunk(
  from: D1Database,
  to: D1Database,
  table: MovedTable,
  accountId: string,
  after: CopyCursor,
  upTo: number,
): Promise<{ copied: number; last: CopyCursor | null }> {
  const { results: sizes } = await chunkRows(from, table, accountId, after, upTo, `${rowBytes(table)} as "__bytes"`).all<Row>();
  const taken = withinBytes(
    sizes.map((row) => Number(row.__bytes)),
    COPY_READ_BYTES,
  );
  if (taken === 0) return { copied: 0, last: null };
  const lastTaken = sizes[taken - 1]!;
  const through = table.withoutRowid ? table.key.map((column) => lastTaken[column]) : Number(lastTaken.__rowid);
  const { results } = await chunkRows(from, table, accountId, after, upTo, "*", through).all<Row>();
  const rows = results.map(({ __rowid, ...row }) => row);
  if (rows.length > 0) await applyOrSkip(to, upserts(to, table, rows), () => rows.map((row) => upsertOne(to, table, row)));
  return { copied: rows.length, last: through };
}

/**
 * The account's rows of a table after `after`, in the bulk copy's order, at most COPY_CHUNK (and
 * no further than `through`, a rowid or key, when given): `select` picks what is read of each.
 */
function chunkRows(from: D1Database, table: MovedTable, accountId: string, after: CopyCursor, upTo: number, select: string, through?: CopyCursor) {
  const params: unknown[] = [accountId];
  const param = (value: unknown) => `?${params.push(value)}`;
  if (!table.withoutRowid) {
    // `through` was read within upTo: it is the nearer end when given.
    return from
      .prepare(
        `select rowid as "__rowid", ${select} from ${quoted(table.name)} where rowid > ${param(Number(after))} and rowid <= ${param(through ?? upTo)} and (${table.rows}) order by rowid limit ${COPY_CHUNK}`,
      )
      .bind(...params);
  }
  const key = table.key.map(quoted).join(", ");
  const tuple = (values: unknown[]) => `(${values.map(param).join(", ")})`;
  const past = Array.isArray(after) ? `and (${key}) > ${tuple(after)}` : "";
  const until = Array.isArray(through) ? `and (${key}) <= ${tuple(through)}` : "";
  return from
    .prepare(
      `select ${select === "*" ? "*" : `${key}, ${select}`} from ${quoted(table.name)} where (${table.rows}) ${past} ${until} order by ${key} limit ${COPY_CHUNK}`,
    )
    .bind(...params);
}

/**
 * Applies up to `limit` entries of the account's change log after `afterSeq`: each logged row is
 * read as it is now, upserted into `to` if it still exists, deleted from it if not. Parents are
 * written before their children and children deleted before their parents. Rows are written as
 * they are read, a bounded part at a time (rowsByKey), so the apply holds no more of them at once.
 */
export async function applyLog(from: D1Database, to: D1Database, accountId: string, afterSeq: number, limit = 500) {
  const { results: entries } = await from
    .prepare(`select seq, tbl, key from move_log where account_id = ?1 and seq > ?2 order by seq limit ${limit}`)
    .bind(accountId, afterSeq)
    .all<{ seq: number; tbl: string; key: string }>();
  if (entries.length === 0) return { applied: 0, lastSeq: afterSeq };
  const keysOf = new Map<string, Set<string>>();
  for (const entry of entries) keysOf.set(entry.tbl, (keysOf.get(entry.tbl) ?? new Set()).add(entry.key));
  const deletes: D1PreparedStatement[][] = [];
  for (const table of MOVED_TABLES) {
    const keys = [...(keysOf.get(table.name) ?? [])];
    for (let start = 0; start < keys.length; start += COPY_CHUNK) {
      const some = keys.slice(start, start + COPY_CHUNK);
      const found = new Set<string>();
      await rowsByKey(from, table, some, async (rows) => {
        for (const row of rows) found.add(JSON.stringify(table.key.map((column) => row[column])));
        const statements = upserts(to, table, rows);
        await applyOrSkip(to, statements, () => rows.map((row) => upsertOne(to, table, row)));
      });
      const gone = some.filter((key) => !found.has(key));
      if (gone.length > 0) deletes.unshift([remove(to, table, gone)]);
    }
  }
  const removals = deletes.flat();
  if (removals.length > 0) await applyOrSkip(to, removals, () => removals);
  return { applied: entries.length, lastSeq: entries.at(-1)!.seq };
}

/**
 * The rows of a table with these keys (JSON arrays as text), handed to `each` in parts of at most
 * COPY_READ_BYTES of values (a larger row alone): their sizes are read first, then each part.
 */
async function rowsByKey(from: D1Database, table: MovedTable, keys: string[], each: (rows: Row[]) => Promise<void>): Promise<void> {
  const read = (some: string[], select: string) =>
    from
      .prepare(`select ${select} from ${quoted(table.name)} where ${keyIn(table)}`)
      .bind(JSON.stringify(some.map((key) => JSON.parse(key))))
      .all<Row>();
  const { results: sizes } = await read(keys, `${table.key.map(quoted).join(", ")}, ${rowBytes(table)} as "__bytes"`);
  for (let start = 0; start < sizes.length;) {
    const taken = withinBytes(
      sizes.slice(start).map((row) => Number(row.__bytes)),
      COPY_READ_BYTES,
    );
    const part = sizes.slice(start, start + taken).map((row) => JSON.stringify(table.key.map((column) => row[column])));
    await each((await read(part, "*")).results);
    start += taken;
  }
}

/**
 * Rows of the account per table, and the bytes of all their values: what must be equal on both
 * shards before the cut-over. (Bytes as stored: `quote()` would make a near-2 MB text of quotes
 * twice as long, past D1's largest value.)
 */
export async function fingerprint(db: D1Database, accountId: string): Promise<Record<string, [number, number]>> {
  const sums = await runNamedD1Batch(
    db,
    Object.fromEntries(
      MOVED_TABLES.map((table) => [
        table.name,
        db.prepare(`select count(*) as n, total(${rowBytes(table)}) as size from ${quoted(table.name)} where ${table.rows}`).bind(accountId),
      ]),
    ),
  );
  return Object.fromEntries(
    MOVED_TABLES.map((table) => {
      const sum = sums[table.name]!.results[0] as Row;
      return [table.name, [Number(sum.n), Number(sum.size)]];
    }),
  );
}

/**
 * The statements that upsert the rows: as many rows a statement as fit in COPY_VALUE_BYTES of
 * JSON, and a row whose JSON alone is larger with its columns bound apart.
 */
function upserts(db: D1Database, table: MovedTable, rows: Row[]): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  let group: Row[] = [];
  let bytes = 0;
  const flush = () => {
    if (group.length > 0) statements.push(upsert(db, table, group));
    group = [];
    bytes = 0;
  };
  for (const row of rows) {
    const size = new TextEncoder().encode(JSON.stringify(row)).byteLength;
    if (size > COPY_VALUE_BYTES) {
      flush();
      statements.push(upsertBound(db, table, row));
      continue;
    }
    if (bytes + size > COPY_VALUE_BYTES) flush();
    group.push(row);
    bytes += size;
  }
  flush();
  return statements;
}

/** One row's upsert, in whichever form keeps its bound values within D1's limits. */
function upsertOne(db: D1Database, table: MovedTable, row: Row): D1PreparedStatement {
  return upserts(db, table, [row])[0]!;
}

/** SQL that writes the columns' values, or leaves an existing row as it is when all are key. */
function onConflict(table: MovedTable, columns: string[]): string {
  const set = columns.filter((column) => !table.key.includes(column)).map((column) => `${quoted(column)} = excluded.${quoted(column)}`);
  return `on conflict (${table.key.map(quoted).join(", ")}) do ${set.length > 0 ? `update set ${set.join(", ")}` : "nothing"}`;
}

/** A row upserted with each column bound apart (?1, ?2, …). */
function upsertBound(db: D1Database, table: MovedTable, row: Row): D1PreparedStatement {
  const columns = Object.keys(row);
  return db
    .prepare(
      `insert into ${quoted(table.name)} (${columns.map(quoted).join(", ")}) values (${columns.map((_, i) => `?${i + 1}`).join(", ")}) ${onConflict(table, columns)}`,
    )
    .bind(...columns.map((column) => row[column] ?? null));
}

/** Rows upserted from one JSON value (a list of them). */
function upsert(db: D1Database, table: MovedTable, rows: Row[]): D1PreparedStatement {
  const columns = Object.keys(rows[0]!);
  const values = columns.map((column) => `json_extract(value, '$."${column}"')`).join(", ");
  return db
    .prepare(
      `insert into ${quoted(table.name)} (${columns.map(quoted).join(", ")}) select ${values} from json_each(?1) where true\n       ${onConflict(table, columns)}`,
    )
    .bind(JSON.stringify(rows));
}

function remove(db: D1Database, table: MovedTable, keys: string[]): D1PreparedStatement {
  return db.prepare(`delete from ${quoted(table.name)} where ${keyIn(table)}`).bind(JSON.stringify(keys.map((key) => JSON.parse(key))));
}

/** SQL matching rows whose primary key is one of the JSON arrays bound as ?1. */
function keyIn(table: MovedTable): string {
  const parts = table.key.map((_, i) => `json_extract(value, '$[${i}]')`);
  return table.key.length === 1
    ? `${quoted(table.key[0]!)} in (select ${parts[0]} from json_each(?1))`
    : `(${table.key.map(quoted).join(", ")}) in (select ${parts.join(", ")} from json_each(?1))`;
}

/**
 * Runs the statements as one batch. A row whose parent the copy has not reached yet fails its
 * foreign key: then each statement runs alone and such a row is left out. It is always logged again
 * later (it came to point at that parent after the parent was made), so a later apply writes it.
 */
async function applyOrSkip(db: D1Database, statements: D1PreparedStatement[], oneByOne: () => D1PreparedStatement[]): Promise<void> {
  try {
    await runNamedD1Batch(db, { upserts: statements });
  } catch (error) {
    if (!isForeignKeyError(error)) throw error;
    for (const statement of oneByOne()) await statement.run().catch((each) => (isForeignKeyError(each) ? undefined : Promise.reject(each)));
  }
}

const isForeignKeyError = (error: unknown) => /FOREIGN KEY constraint failed/i.test(String(error));
