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
}

export const newTally = (): D1Tally => ({ rowsRead: 0, rowsWritten: 0, sqlMs: 0, statements: 0, calls: 0 });

/** The tally as a Server-Timing header: D1's own SQL time as `dur`, the counts as descriptions. */
export function serverTiming(tally: D1Tally): string {
  return [
    `d1-rows-read;desc="${tally.rowsRead}"`,
    `d1-rows-written;desc="${tally.rowsWritten}"`,
    `d1-statements;desc="${tally.statements}"`,
    `d1-calls;desc="${tally.calls}"`,
    `d1-sql;dur=${Number(tally.sqlMs.toFixed(3))}`,
  ].join(", ");
}

/**
 * A D1 binding that adds up the `meta` of every statement run through it (rows read and written, SQL time). Drizzle reads
 * selects with `raw()`, which has no meta, so `raw()` is served from `run()` (same rows, with meta).
 */
export function countingD1(d1: D1Database, tally: D1Tally = newTally()) {
  const record = (result: D1Result) => {
    tally.rowsRead += result.meta.rows_read ?? 0;
    tally.rowsWritten += result.meta.rows_written ?? 0;
    tally.sqlMs += result.meta.duration ?? 0;
    tally.statements += 1;
    return result;
  };
  const call = (result: D1Result) => {
    tally.calls += 1;
    return record(result);
  };
  const wrap = (statement: D1PreparedStatement): D1PreparedStatement =>
    ({
      bind: (...values: unknown[]) => wrap(statement.bind(...values)),
      all: async () => call(await statement.all()),
      run: async () => call(await statement.run()),
      first: async (column?: string) => {
        const result = call(await statement.all());
        const row = (result.results[0] ?? null) as Record<string, unknown> | null;
        return column ? (row?.[column] ?? null) : row;
      },
      raw: async () => call(await statement.run()).results.map((row) => Object.values(row as object)),
      __statement: statement,
    }) as unknown as D1PreparedStatement;
  const db = {
    prepare: (query: string) => wrap(d1.prepare(query)),
    batch: async (statements: D1PreparedStatement[]) => {
      const results = await d1.batch(statements.map((s) => (s as unknown as { __statement: D1PreparedStatement }).__statement));
      tally.calls += 1;
      results.forEach(record);
      return results;
    },
    exec: (query: string) => d1.exec(query),
  } as unknown as D1Database;
  return { db, tally };
}
