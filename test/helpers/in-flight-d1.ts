/** Calls to D1 under way at once, across every binding wrapped with the same counter. */
export interface InFlight {
  now: number;
  most: number;
  calls: number;
}

export const newInFlight = (): InFlight => ({ now: 0, most: 0, calls: 0 });

/**
 * A D1 binding that counts its calls under way (a statement's all/run/first/raw, a batch: each a
 * round trip, a connection on Cloudflare), each held `delayMs` longer so that calls made at once
 * overlap on this machine as they would at a distance.
 */
export function inFlightD1(d1: D1Database, counter: InFlight, delayMs = 5) {
  const call = async <T>(go: () => Promise<T>): Promise<T> => {
    counter.now++;
    counter.calls++;
    counter.most = Math.max(counter.most, counter.now);
    try {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return await go();
    } finally {
      counter.now--;
    }
  };
  const wrap = (statement: D1PreparedStatement): D1PreparedStatement =>
    ({
      bind: (...values: unknown[]) => wrap(statement.bind(...values)),
      all: () => call(() => statement.all()),
      run: () => call(() => statement.run()),
      first: (column?: string) => call(() => (column ? statement.first(column) : statement.first())),
      raw: (options?: { columnNames?: boolean }) => call(() => statement.raw(options as { columnNames: true })),
      __inner: statement,
    }) as unknown as D1PreparedStatement;
  const db = {
    prepare: (sql: string) => wrap(d1.prepare(sql)),
    batch: (list: D1PreparedStatement[]) => call(() => d1.batch(list.map((s) => (s as unknown as { __inner: D1PreparedStatement }).__inner))),
    exec: (sql: string) => call(() => d1.exec(sql)),
    withSession: () => db,
    getBookmark: () => null,
  } as unknown as D1Database;
  return db;
}
