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
  /** One round trip carrying `statements` queries; `results` reads what each of them returned. */
  call<T>(statements: number, run: () => Promise<T>, results: (result: T) => unknown[]): Promise<T>;
}

const inner = new WeakMap<object, D1PreparedStatement>();

function gatedStatement(statement: D1PreparedStatement, gate: D1Gate): D1PreparedStatement {
  const call = <T>(run: () => Promise<T>, rows: (result: T) => unknown) => gate.call(1, run, (result) => [rows(result)]);
  const gated = {
    bind: (...values: unknown[]) => {
      if (gate.bound) for (const value of values) gate.bound(value);
      return gatedStatement(statement.bind(...values), gate);
    },
    first: (column?: string) => call(() => (column === undefined ? statement.first() : statement.first(column)), (row) => row),
    all: () => call(() => statement.all(), (result) => result.results),
    run: () => call(() => statement.run(), (result) => result.results),
    raw: (options?: { columnNames?: boolean }) => call(() => statement.raw(options as { columnNames: true }), (rows) => rows),
  } as unknown as D1PreparedStatement;
  inner.set(gated, statement);
  return gated;
}

export function gatedD1<T extends D1Database | D1DatabaseSession>(d1: T, gate: D1Gate): T {
  const gated = {
    prepare: (sql: string) => {
      gate.prepared?.(sql);
      return gatedStatement(d1.prepare(sql), gate);
    },
    batch: (statements: D1PreparedStatement[]) =>
      gate.call(
        statements.length,
        () => d1.batch(statements.map((statement) => inner.get(statement) ?? statement)),
        (results) => results.map((result) => result.results),
      ),
    exec: (sql: string) => {
      gate.prepared?.(sql);
      return gate.call(1, () => (d1 as D1Database).exec(sql), () => [[]]);
    },
    withSession: (constraint?: string) => gatedD1((d1 as D1Database).withSession(constraint as D1SessionConstraint), gate),
    getBookmark: () => (d1 as D1DatabaseSession).getBookmark(),
    dump: () => (d1 as D1Database).dump(),
  };
  return gated as unknown as T;
}
