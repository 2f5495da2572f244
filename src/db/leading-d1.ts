/**
 * A D1 session whose first round trip carries a request's leading statements in front of its
 * own: an Idempotency-Key's claim rides on the write's first read instead of costing a round trip
 * of its own (middleware/idempotency.ts). Only a round trip that only reads takes them along; when
 * the first one writes, the leading statements go alone just before it, so nothing is written
 * before their outcome is known. `settle` reads their results and may throw to stop the request:
 * the caller then gets that error instead of its own results. Every later call waits for it.
 */
export interface Lead {
  /** The statements to send first, prepared on the session they go to. */
  statements(d1: D1Database): D1PreparedStatement[];
  /** Their results; throws to stop the request. */
  settle(results: D1Result[]): void;
}

export interface LeadingD1 {
  d1: D1Database;
  /** Whether the leading statements went (with a call of the request, or by `send`). */
  sent(): boolean;
  /** Sends the leading statements alone, when no call of the request took them. */
  send(): Promise<void>;
}

/** Whether a statement only reads. Pure: conservative, anything but a plain SELECT counts as a write. */
export function onlyReads(sql: string): boolean {
  return /^\s*select\b/i.test(sql) && !/\b(insert|update|delete|replace)\b/i.test(sql.replace(/'(?:[^']|'')*'/g, "''"));
}

type Unwrapped = { statement: D1PreparedStatement; sql: string };
const inner = new WeakMap<object, Unwrapped>();

/** Rows of a batch result as `raw()` gives them: each row's values in column order (as drizzle maps a batch). */
const rawRows = (result: D1Result) => result.results.map((row) => Object.values(row as Record<string, unknown>));

export function leadingD1(d1: D1Database, lead: Lead): LeadingD1 {
  let taken = false;
  let done: Promise<void> = Promise.resolve();

  /** One call of the request: with the lead in front when it is the first and only reads. */
  async function through<T>(calls: Unwrapped[], alone: () => Promise<T>, fromBatch: (results: D1Result[]) => T): Promise<T> {
    if (taken) {
      await done;
      return alone();
    }
    taken = true;
    const leading = lead.statements(d1);
    if (calls.length > 0 && calls.every((call) => onlyReads(call.sql))) {
      const both = d1.batch([...leading, ...calls.map((call) => call.statement)]);
      done = both.then((results) => lead.settle(results.slice(0, leading.length)));
      await done;
      return fromBatch((await both).slice(leading.length));
    }
    done = d1.batch(leading).then((results) => lead.settle(results));
    await done;
    return alone();
  }

  const statement = (prepared: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const self = { statement: prepared, sql };
    const one = <T>(alone: () => Promise<T>, fromBatch: (result: D1Result) => T) => through([self], alone, (results) => fromBatch(results[0]!));
    const wrapped = {
      bind: (...values: unknown[]) => statement(prepared.bind(...values), sql),
      all: () => one(() => prepared.all(), (result) => result),
      run: () => one(() => prepared.run(), (result) => result),
      first: (column?: string) =>
        one(
          () => (column === undefined ? prepared.first() : prepared.first(column)),
          (result) => {
            const row = (result.results[0] ?? null) as Record<string, unknown> | null;
            return column === undefined || row === null ? row : row[column];
          },
        ),
      raw: (options?: { columnNames?: boolean }) =>
        one(
          () => prepared.raw(options as { columnNames: true }),
          (result) => (options?.columnNames ? [Object.keys(result.results[0] ?? {}), ...rawRows(result)] : rawRows(result)),
        ),
    } as unknown as D1PreparedStatement;
    inner.set(wrapped, self);
    return wrapped;
  };

  const wrapped = {
    prepare: (sql: string) => statement(d1.prepare(sql), sql),
    batch: (list: D1PreparedStatement[]) => {
      const calls = list.map((one) => inner.get(one) ?? { statement: one, sql: "" });
      const real = calls.map((call) => call.statement);
      return through(calls, () => d1.batch(real), (results) => results);
    },
    exec: (sql: string) => through([], () => d1.exec(sql), () => ({ count: 0, duration: 0 })),
    withSession: (constraint?: string) => d1.withSession(constraint as D1SessionConstraint),
    dump: () => d1.dump(),
  } as unknown as D1Database;

  return {
    d1: wrapped,
    sent: () => taken,
    async send() {
      if (taken) return done;
      taken = true;
      done = d1.batch(lead.statements(d1)).then((results) => lead.settle(results));
      return done;
    },
  };
}
