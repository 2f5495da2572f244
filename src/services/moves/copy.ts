/**
 * Copying an account's rows from one shard to another, on the D1 bindings themselves (the cron's
 * primaries). Rows travel as one JSON parameter per statement and are upserted by primary key, so a
 * row copied twice is simply written again, stamps and all, as it was.
 */
import { MOVED_TABLES, type MovedTable } from "./tables";

/** Rows one statement reads or writes. */
export const COPY_CHUNK = 100;

type Row = Record<string, unknown>;
const quoted = (column: string) => `"${column}"`;

/** Where the bulk copy of a table stands: the last rowid copied, or a WITHOUT ROWID table's last key (0 before its first row). */
export type CopyCursor = number | unknown[];

/**
 * One chunk of a table's rows of the account, after `after`, upserted into `to`: in rowid order up
 * to `upTo` (the highest rowid when the move's triggers came on), or a WITHOUT ROWID table in key
 * order to its end (a row written since is copied as it is now, and its logged change replays
 * after the bulk copy, so copying it early changes nothing).
 */
export async function copyChunk(from: D1Database, to: D1Database, table: MovedTable, accountId: string, after: CopyCursor, upTo: number): Promise<{ copied: number; last: CopyCursor | null }> {
  const { results } = table.withoutRowid ? await keyedChunk(from, table, accountId, after) : await rowidChunk(from, table, accountId, Number(after), upTo);
  const rows = results.map(({ __rowid, ...row }) => row);
  if (rows.length > 0) await applyOrSkip(to, [upsert(to, table, rows)], () => rows.map((row) => upsert(to, table, [row])));
  const last = results.at(-1);
  return { copied: rows.length, last: last === undefined ? null : table.withoutRowid ? table.key.map((column) => last[column]) : Number(last.__rowid) };
}

const rowidChunk = (from: D1Database, table: MovedTable, accountId: string, after: number, upTo: number) =>
  from
    .prepare(`select rowid as "__rowid", * from ${quoted(table.name)} where rowid > ?2 and rowid <= ?3 and (${table.rows}) order by rowid limit ${COPY_CHUNK}`)
    .bind(accountId, after, upTo)
    .all<Row>();

function keyedChunk(from: D1Database, table: MovedTable, accountId: string, after: CopyCursor) {
  const key = table.key.map(quoted).join(", ");
  const start = Array.isArray(after);
  const past = start ? `and (${key}) > (${table.key.map((_, i) => `?${i + 2}`).join(", ")})` : "";
  return from
    .prepare(`select * from ${quoted(table.name)} where (${table.rows}) ${past} order by ${key} limit ${COPY_CHUNK}`)
    .bind(accountId, ...(start ? after : []))
    .all<Row>();
}

/**
 * Replays up to `limit` entries of the account's change log after `afterSeq`: each logged row is
 * read as it is now, upserted into `to` if it still exists, deleted from it if not. Parents are
 * written before their children and children deleted before their parents.
 */
export async function replayLog(from: D1Database, to: D1Database, accountId: string, afterSeq: number, limit = 500) {
  const { results: entries } = await from
    .prepare(`select seq, tbl, key from move_log where account_id = ?1 and seq > ?2 order by seq limit ${limit}`)
    .bind(accountId, afterSeq)
    .all<{ seq: number; tbl: string; key: string }>();
  if (entries.length === 0) return { applied: 0, lastSeq: afterSeq };
  const keysOf = new Map<string, Set<string>>();
  for (const entry of entries) keysOf.set(entry.tbl, (keysOf.get(entry.tbl) ?? new Set()).add(entry.key));
  const upserts: D1PreparedStatement[][] = [];
  const deletes: D1PreparedStatement[][] = [];
  for (const table of MOVED_TABLES) {
    const keys = [...(keysOf.get(table.name) ?? [])];
    for (let start = 0; start < keys.length; start += COPY_CHUNK) {
      const some = keys.slice(start, start + COPY_CHUNK);
      const { results } = await from.prepare(`select * from ${quoted(table.name)} where ${keyIn(table)}`).bind(JSON.stringify(some.map((key) => JSON.parse(key)))).all<Row>();
      const found = new Set(results.map((row) => JSON.stringify(table.key.map((column) => row[column]))));
      const gone = some.filter((key) => !found.has(key));
      if (results.length > 0) upserts.push(results.map((row) => upsert(to, table, [row])));
      if (gone.length > 0) deletes.unshift(gone.map((key) => remove(to, table, [key])));
    }
  }
  const statements = [...upserts.flat(), ...deletes.flat()];
  await applyOrSkip(to, statements, () => statements);
  return { applied: entries.length, lastSeq: entries.at(-1)!.seq };
}

/** Rows of the account per table, and the length of all their values: what must be equal on both shards before the cut-over. */
export async function fingerprint(db: D1Database, accountId: string): Promise<Record<string, [number, number]>> {
  const columns = await db.batch(MOVED_TABLES.map((table) => db.prepare(`select name from pragma_table_info('${table.name}')`)));
  const sums = await db.batch(
    MOVED_TABLES.map((table, i) => {
      const size = (columns[i]!.results as { name: string }[]).map(({ name }) => `length(quote(${quoted(name)}))`).join(" + ");
      return db.prepare(`select count(*) as n, total(${size}) as size from ${quoted(table.name)} where ${table.rows}`).bind(accountId);
    }),
  );
  return Object.fromEntries(MOVED_TABLES.map((table, i) => [table.name, [Number((sums[i]!.results[0] as Row).n), Number((sums[i]!.results[0] as Row).size)]]));
}

function upsert(db: D1Database, table: MovedTable, rows: Row[]): D1PreparedStatement {
  const columns = Object.keys(rows[0]!);
  const values = columns.map((column) => `json_extract(value, '$."${column}"')`).join(", ");
  const set = columns.filter((column) => !table.key.includes(column)).map((column) => `${quoted(column)} = excluded.${quoted(column)}`);
  return db
    .prepare(
      `insert into ${quoted(table.name)} (${columns.map(quoted).join(", ")}) select ${values} from json_each(?1) where true
       on conflict (${table.key.map(quoted).join(", ")}) do ${set.length > 0 ? `update set ${set.join(", ")}` : "nothing"}`,
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
 * later (it came to point at that parent after the parent was made), so a later replay writes it.
 */
async function applyOrSkip(db: D1Database, statements: D1PreparedStatement[], oneByOne: () => D1PreparedStatement[]): Promise<void> {
  try {
    await db.batch(statements);
  } catch (error) {
    if (!isForeignKeyError(error)) throw error;
    for (const statement of oneByOne()) await statement.run().catch((each) => (isForeignKeyError(each) ? undefined : Promise.reject(each)));
  }
}

const isForeignKeyError = (error: unknown) => /FOREIGN KEY constraint failed/i.test(String(error));
