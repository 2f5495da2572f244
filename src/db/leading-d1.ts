/**
 * A D1 session whose first round trip carries a request's leading statements in front of its
 * own: an Idempotency-Key's claim rides on the write's first round trip instead of costing one of
 * its own (middleware/idempotency.ts).
 * - A first round trip that only reads takes `statements` along; `settle` reads their results and
 *   may throw to stop the request, which then gets that error instead of its own results.
 * - One that writes takes `guarded` along: the same claim, then a statement that fails the whole
 *   batch unless the claim made the lead the request's own, so nothing of it is written otherwise.
 *   When it failed so (`refused`), `statements` go alone and `settle` says what the request gets.
 *   When it failed for its own reason, nothing of the lead stayed either: the next call carries it.
 * Every call made while the first is out waits for the lead's outcome.
 */
export interface Lead {
  /** The statements for the front of a round trip that only reads, prepared on the session they go to. */
  statements(d1: D1Database): D1PreparedStatement[];
  /** The statements for the front of a round trip that writes: its last fails the batch unless the lead is the request's. */
  guarded(d1: D1Database): D1PreparedStatement[];
  /** Whether a batch failed on `guarded`'s last statement. */
  refused(error: unknown): boolean;
  /** `statements`' results; throws to stop the request. */
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

  /** One call of the request: with the lead in front when it is the first. */
  async function through<T>(calls: Unwrapped[], alone: () => Promise<T>, fromBatch: (results: D1Result[]) => T): Promise<T> {
    if (taken) {
      await done;
      if (taken) return alone();
    }
    taken = true;
    if (calls.length > 0 && calls.every((call) => onlyReads(call.sql))) {
      const leading = lead.statements(d1);
      const both = d1.batch([...leading, ...calls.map((call) => call.statement)]);
      done = both.then((results) => lead.settle(results.slice(0, leading.length)));
      await done;
      return fromBatch((await both).slice(leading.length));
    }
    const front = lead.guarded(d1);
    let outcome!: { resolve: () => void; reject: (error: unknown) => void };
    done = new Promise<void>((resolve, reject) => (outcome = { resolve, reject }));
    done.catch(() => {}); // awaited by every later call; none may be waiting
    let results: D1Result[];
    try {
      results = await d1.batch([...front, ...calls.map((call) => call.statement)]);
    } catch (error) {
      if (!lead.refused(error)) {
        taken = false; // rolled back with the batch: the next call carries the lead again
        outcome.resolve();
        throw error;
      }
      const settled = d1.batch(lead.statements(d1)).then((alone) => lead.settle(alone));
      settled.then(outcome.resolve, outcome.reject);
      await settled;
      return alone(); // the key became the request's meanwhile (another's lock lapsed)
    }
    outcome.resolve();
    return fromBatch(results.slice(front.length));
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
