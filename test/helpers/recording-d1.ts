/** A D1 binding that records every statement's SQL and bound values, then runs it as it is. */
export function recordingD1(d1: D1Database) {
  const statements: { sql: string; params: unknown[] }[] = [];
  const wrap = (sql: string, statement: D1PreparedStatement, params: unknown[] = []): D1PreparedStatement => {
    const run = <T>(go: () => T) => {
      statements.push({ sql, params });
      return go();
    };
    return {
      bind: (...values: unknown[]) => wrap(sql, statement.bind(...values), values),
      all: () => run(() => statement.all()),
      run: () => run(() => statement.run()),
      first: (column?: string) => run(() => (column ? statement.first(column) : statement.first())),
      raw: (options?: { columnNames?: boolean }) => run(() => statement.raw(options as { columnNames: true })),
      __inner: statement,
      __sql: sql,
      __params: params,
    } as unknown as D1PreparedStatement;
  };
  const db = {
    prepare: (sql: string) => wrap(sql, d1.prepare(sql)),
    batch: (list: D1PreparedStatement[]) => {
      for (const s of list as unknown as { __sql: string; __params: unknown[] }[]) statements.push({ sql: s.__sql, params: s.__params });
      return d1.batch(list.map((s) => (s as unknown as { __inner: D1PreparedStatement }).__inner));
    },
    exec: (sql: string) => d1.exec(sql),
    // A request's session is this binding itself (locally every query is the primary's).
    withSession: () => db,
    // It gives no bookmark (D1's session before its first query), so answers carry none.
    getBookmark: () => null,
  } as unknown as D1Database;
  return { db, statements };
}
