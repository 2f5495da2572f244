/**
 * A D1 binding with one read replica that lags as far as D1 lets it (there are no replicas locally).
 * Writes run on the primary and are kept in order; the replica (a second database with the same
 * migrations) replays them only as far as a session's bookmark requires. A session started
 * "first-primary" runs its first statement on the primary and takes the primary's bookmark; its
 * later reads go to the replica caught up to exactly that bookmark: the oldest copy D1 may serve.
 * A "first-unconstrained" session reads the replica as it is, however stale; a session from a
 * bookmark (the primary's count of writes when it was given) reads the replica caught up to exactly
 * that. The binding used without a session (the consumer, the cron) is the primary.
 */
type Unit = { sql: string; params: unknown[] }[];
const WRITE = /^\s*(insert|update|delete|replace)\b|\b(insert\s+into|update\s+"?\w+"?\s+set|delete\s+from)\b/i;
const isWrite = (sql: string) => WRITE.test(sql);

export function laggingReplica(primary: D1Database, replica: D1Database) {
  const log: Unit[] = [];
  const state = { applied: 0, replicaReads: 0, primaryReads: 0, constraint: null as null | "first-unconstrained" };

  async function catchUp(to: number) {
    for (; state.applied < to; state.applied++) {
      const unit = log[state.applied]!;
      await replica.batch(unit.map((s) => replica.prepare(s.sql).bind(...s.params)));
    }
  }

  type Wrapped = D1PreparedStatement & { __sql: string; __params: unknown[] };
  /** Statements of one session (or of the binding itself, `session` null: the primary). */
  function statements(session: { bookmark: number; started: boolean; constraint: string } | null) {
    async function run<T>(units: Wrapped[], go: (db: D1Database) => Promise<T>): Promise<T> {
      const writes = units.some((s) => isWrite(s.__sql));
      const onPrimary = !session || writes || (!session.started && session.constraint === "first-primary");
      if (session && !session.started && session.constraint === "first-unconstrained") session.bookmark = state.applied;
      if (session) session.started = true;
      if (onPrimary) {
        state.primaryReads += writes ? 0 : 1;
        const result = await go(primary);
        if (writes) log.push(units.map((s) => ({ sql: s.__sql, params: s.__params })));
        if (session) session.bookmark = log.length;
        return result;
      }
      await catchUp(session.bookmark);
      state.replicaReads += 1;
      return go(replica);
    }
    const prepare = (sql: string, params: unknown[] = []): Wrapped => {
      const on = (db: D1Database) => db.prepare(sql).bind(...params);
      const self = {
        __sql: sql,
        __params: params,
        bind: (...values: unknown[]) => prepare(sql, values),
        all: () => run([self], (db) => on(db).all()),
        run: () => run([self], (db) => on(db).run()),
        first: (column?: string) => run([self], (db) => (column ? on(db).first(column) : on(db).first())),
        raw: (options?: { columnNames: true }) => run([self], (db) => on(db).raw(options as { columnNames: true })),
      } as unknown as Wrapped;
      return self;
    };
    return {
      prepare: (sql: string) => prepare(sql),
      batch: (list: D1PreparedStatement[]) => {
        const units = list as Wrapped[];
        return run(units, (db) => db.batch(units.map((s) => db.prepare(s.__sql).bind(...s.__params))));
      },
    };
  }

  const binding = {
    ...statements(null),
    exec: (sql: string) => primary.exec(sql),
    withSession: (constraint: string) => {
      const chosen = state.constraint ?? constraint;
      // A bookmark (this double's are the primary's write counts) asks for a replica at least that new.
      const asked = /^\d+$/.test(chosen) ? Number(chosen) : null;
      const session = { bookmark: asked ?? 0, started: false, constraint: asked === null ? chosen : "bookmark" };
      // Fixed width, so that they sort oldest to newest as text, as D1's do.
      return { ...statements(session), getBookmark: () => (session.started || asked !== null ? String(session.bookmark).padStart(8, "0") : null) };
    },
  } as unknown as D1Database;
  /** Brings the replica up to everything the primary committed, as a replica that caught up would be. */
  const catchUpAll = () => catchUp(log.length);
  /** Brings the replica up to the primary's first `writes` commits (a prefix, as D1 replicates). */
  const catchUpTo = (writes: number) => catchUp(Math.min(writes, log.length));
  return { binding, state, log, catchUpAll, catchUpTo };
}
