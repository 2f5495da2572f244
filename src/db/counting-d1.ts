/** What a request's statements cost D1: the Server-Timing header and the request log carry it. */
export interface D1Tally {
  rowsRead: number;
  /** D1 bills every row and index entry a statement writes. */
  rowsWritten: number;
  /** The SQL time D1 reports (`meta.duration`, ms), summed. */
  sqlMs: number;
  statements: number;
  /** Round trips to D1: a batch is one, however many statements it holds. */
  calls: number;
  /** Rows written by the table each writing statement names first (its index entries and triggers' writes included). */
  writtenByTable: Record<string, number>;
}

export const newTally = (): D1Tally => ({ rowsRead: 0, rowsWritten: 0, sqlMs: 0, statements: 0, calls: 0, writtenByTable: {} });

/** The table a writing statement writes to, from its SQL (`insert into`, `update`, `delete from`); "other" when none is named. Pure. */
export function writtenTable(query: string): string {
  return /^\s*(?:insert(?:\s+or\s+\w+)?\s+into|update(?:\s+or\s+\w+)?|delete\s+from)\s+["`]?(\w+)/i.exec(query)?.[1] ?? "other";
}

/** The tally as a Server-Timing header: D1's own SQL time as `dur`, the counts as descriptions (the rows written by table when any were). */
export function serverTiming(tally: D1Tally): string {
  return [
    `d1-rows-read;desc="${tally.rowsRead}"`,
    `d1-rows-written;desc="${tally.rowsWritten}"`,
    `d1-statements;desc="${tally.statements}"`,
    `d1-calls;desc="${tally.calls}"`,
    `d1-sql;dur=${Number(tally.sqlMs.toFixed(3))}`,
    ...(tally.rowsWritten > 0
      ? [
          `d1-written-by-table;desc="${Object.entries(tally.writtenByTable)
            .map(([table, n]) => `${table}:${n}`)
            .join(" ")}"`,
        ]
      : []),
  ].join(", ");
}

/**
 * A D1 binding that adds up the `meta` of every statement run through it (rows read and written, SQL time). Drizzle reads
 * selects with `raw()`, which has no meta, so `raw()` is served from `run()` (same rows, with meta).
 */
export function countingD1(d1: D1Database, tally: D1Tally = newTally()) {
  const record = (result: D1Result, query: string) => {
    const written = result.meta.rows_written ?? 0;
    tally.rowsRead += result.meta.rows_read ?? 0;
    tally.rowsWritten += written;
    if (written > 0) {
      const table = writtenTable(query);
      tally.writtenByTable[table] = (tally.writtenByTable[table] ?? 0) + written;
    }
    tally.sqlMs += result.meta.duration ?? 0;
    tally.statements += 1;
    return result;
  };
  const call = (result: D1Result, query: string) => {
    tally.calls += 1;
    return record(result, query);
  };
  type Wrapped = { __statement: D1PreparedStatement; __query: string };
  const wrap = (statement: D1PreparedStatement, query: string): D1PreparedStatement =>
    ({
      bind: (...values: unknown[]) => wrap(statement.bind(...values), query),
      all: async () => call(await statement.all(), query),
      run: async () => call(await statement.run(), query),
      first: async (column?: string) => {
        const result = call(await statement.all(), query);
        const row = (result.results[0] ?? null) as Record<string, unknown> | null;
        return column ? (row?.[column] ?? null) : row;
      },
      raw: async () => call(await statement.run(), query).results.map((row) => Object.values(row as object)),
      __statement: statement,
      __query: query,
    }) as unknown as D1PreparedStatement;
  const db = {
    prepare: (query: string) => wrap(d1.prepare(query), query),
    batch: async (statements: D1PreparedStatement[]) => {
      const wrapped = statements as unknown as Wrapped[];
      const results = await d1.batch(wrapped.map((s) => s.__statement));
      tally.calls += 1;
      results.forEach((result, i) => record(result, wrapped[i]!.__query));
      return results;
    },
    exec: (query: string) => d1.exec(query),
  } as unknown as D1Database;
  return { db, tally };
}
