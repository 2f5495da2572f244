/**
 * A D1 binding (or one of its sessions) whose every round trip passes a gate first: the gate may
 * count it, delay it, refuse it, or look at what it carries. Drizzle and the code above see the
 * same interface. The cron's run budget (cron.ts) and the development layer of Cloudflare's
 * limits (dev/limited-bindings.ts) are gates.
 */
export interface D1Gate {
  /** A statement is prepared from `sql`. */
  prepared?(sql: string): void;
  /** A value is bound to a statement. */
  bound?(value: unknown): void;
  /** One round trip carrying the queries `sqls`; `results` reads what each of them returned. */
  call<T>(sqls: string[], run: () => Promise<T>, results: (result: T) => unknown[]): Promise<T>;
  /** A session of the binding is started with `constraint` (D1's Sessions API); the gate of its calls. */
  session?(constraint: string | undefined): D1Gate;
}

const inner = new WeakMap<object, { statement: D1PreparedStatement; sql: string }>();

function gatedStatement(statement: D1PreparedStatement, sql: string, gate: D1Gate): D1PreparedStatement {
  const call = <T>(run: () => Promise<T>, rows: (result: T) => unknown) => gate.call([sql], run, (result) => [rows(result)]);
  const gated = {
    bind: (...values: unknown[]) => {
      if (gate.bound) for (const value of values) gate.bound(value);
      return gatedStatement(statement.bind(...values), sql, gate);
    },
    first: (column?: string) =>
      call(
        () => (column === undefined ? statement.first() : statement.first(column)),
        (row) => row,
      ),
    all: () =>
      call(
        () => statement.all(),
        (result) => result.results,
      ),
    run: () =>
      call(
        () => statement.run(),
        (result) => result.results,
      ),
    raw: (options?: { columnNames?: boolean }) =>
      call(
        () => statement.raw(options as { columnNames: true }),
        (rows) => rows,
      ),
  } as unknown as D1PreparedStatement;
  inner.set(gated, { statement, sql });
  return gated;
}

export function gatedD1<T extends D1Database | D1DatabaseSession>(d1: T, gate: D1Gate): T {
  const gated = {
    prepare: (sql: string) => {
      gate.prepared?.(sql);
      return gatedStatement(d1.prepare(sql), sql, gate);
    },
    batch: (statements: D1PreparedStatement[]) =>
      gate.call(
        statements.map((statement) => inner.get(statement)?.sql ?? ""),
        () => d1.batch(statements.map((statement) => inner.get(statement)?.statement ?? statement)),
        (results) => results.map((result) => result.results),
      ),
    exec: (sql: string) => {
      gate.prepared?.(sql);
      return gate.call(
        [sql],
        () => (d1 as D1Database).exec(sql),
        () => [[]],
      );
    },
    withSession: (constraint?: string) => gatedD1((d1 as D1Database).withSession(constraint as D1SessionConstraint), gate.session?.(constraint) ?? gate),
    getBookmark: () => (d1 as D1DatabaseSession).getBookmark(),
    dump: () => (d1 as D1Database).dump(),
  };
  return gated as unknown as T;
}
