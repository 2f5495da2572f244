import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { leadingD1, onlyReads, type Lead } from "../../src/db/leading-d1";

describe("onlyReads", () => {
  const cases: [string, boolean][] = [
    ["select 1", true],
    ['  SELECT "updated_at", "deleted" from t', true],
    ["select * from t where name = 'update me'", true],
    ["insert into t values (1)", false],
    ["update t set a = 1", false],
    ["delete from t", false],
    ["with x as (select 1) insert into t select * from x", false],
    ["select replace(a, 'x', 'y') from t", false], // conservative: a function named like a write
    ["", false],
  ];
  for (const [sql, expected] of cases) it(`${JSON.stringify(sql)} → ${expected}`, () => expect(onlyReads(sql)).toBe(expected));
});

describe("leadingD1", () => {
  /** A binding that records each round trip's statements, over the real shard. */
  function recorded() {
    const trips: string[][] = [];
    const d1 = env.SHARD_A!;
    const sqlOf = new WeakMap<object, string>();
    const binding = {
      prepare: (sql: string) => {
        const statement = d1.prepare(sql);
        const wrap = (s: D1PreparedStatement): D1PreparedStatement => {
          const out = { bind: (...v: unknown[]) => wrap(s.bind(...v)), all: () => (trips.push([sql]), s.all()), run: () => (trips.push([sql]), s.run()), first: () => (trips.push([sql]), s.first()), raw: () => (trips.push([sql]), s.raw()) } as unknown as D1PreparedStatement;
          sqlOf.set(out, sql);
          (out as unknown as { inner: D1PreparedStatement }).inner = s;
          return out;
        };
        return wrap(statement);
      },
      batch: (list: D1PreparedStatement[]) => (trips.push(list.map((s) => sqlOf.get(s)!)), d1.batch(list.map((s) => (s as unknown as { inner: D1PreparedStatement }).inner))),
    } as unknown as D1Database;
    return { binding, trips };
  }
  const lead = (settle: Lead["settle"] = () => {}, guard = "select 'guard' as g"): Lead => ({
    statements: (d1) => [d1.prepare("select 'lead' as l")],
    guarded: (d1) => [d1.prepare("select 'lead' as l"), d1.prepare(guard)],
    refused: (error) => /NOT NULL constraint failed: leading_probe\.a/.test(String(error)),
    settle,
  });
  beforeAll(() => env.SHARD_A!.exec("create table if not exists leading_probe (a not null); create table if not exists leading_rows (b)"));

  it("sends its statements in front of a first round trip that only reads, and hands the caller its own results", async () => {
    const { binding, trips } = recorded();
    const seen: unknown[] = [];
    const led = leadingD1(binding, lead((results) => seen.push(results[0]!.results)));
    expect(await led.d1.prepare("select 2 as two").first()).toEqual({ two: 2 });
    expect(await led.d1.prepare("select 3 as three").raw()).toEqual([[3]]);
    expect(trips).toEqual([["select 'lead' as l", "select 2 as two"], ["select 3 as three"]]);
    expect(seen).toEqual([[{ l: "lead" }]]);
    expect(led.sent()).toBe(true);
  });

  it("stops the caller, and every call after, when settle throws", async () => {
    const { binding, trips } = recorded();
    const led = leadingD1(binding, lead(() => { throw new Error("decided"); }));
    await expect(led.d1.prepare("select 1").all()).rejects.toThrow("decided");
    await expect(led.d1.prepare("insert into leading_rows values (0)").run()).rejects.toThrow("decided");
    expect(trips).toEqual([["select 'lead' as l", "select 1"]]);
  });

  it("sends its guarded statements in front of a first round trip that writes", async () => {
    const { binding, trips } = recorded();
    const led = leadingD1(binding, lead());
    const [, counted] = await led.d1.batch([led.d1.prepare("insert into leading_rows values (1)"), led.d1.prepare("select count(*) as n from leading_rows where b = 1")]);
    expect(counted!.results).toEqual([{ n: 1 }]);
    expect(trips).toEqual([["select 'lead' as l", "select 'guard' as g", "insert into leading_rows values (1)", "select count(*) as n from leading_rows where b = 1"]]);
  });

  it("writes nothing when the guard refuses the batch: the lead goes alone and settles the caller's fate", async () => {
    const { binding, trips } = recorded();
    const led = leadingD1(binding, lead(() => { throw new Error("decided"); }, "insert into leading_probe values (null)"));
    await expect(led.d1.prepare("insert into leading_rows values (2)").run()).rejects.toThrow("decided");
    expect(trips).toEqual([["select 'lead' as l", "insert into leading_probe values (null)", "insert into leading_rows values (2)"], ["select 'lead' as l"]]);
    expect(await env.SHARD_A!.prepare("select count(*) as n from leading_rows where b = 2").first("n")).toBe(0);
  });

  it("runs the caller's statements alone when the lead, read again, turned out the caller's", async () => {
    const { binding, trips } = recorded();
    const led = leadingD1(binding, lead(() => {}, "insert into leading_probe values (null)"));
    await led.d1.prepare("insert into leading_rows values (3)").run();
    expect(trips.at(-1)).toEqual(["insert into leading_rows values (3)"]);
    expect(await env.SHARD_A!.prepare("select count(*) as n from leading_rows where b = 3").first("n")).toBe(1);
  });

  it("carries the lead again on the next call when the batch failed for the caller's own reason", async () => {
    const { binding, trips } = recorded();
    const led = leadingD1(binding, lead());
    await expect(led.d1.prepare("insert into no_such_table values (1)").run()).rejects.toThrow(/no such table/);
    expect(led.sent()).toBe(false);
    await led.d1.prepare("select 4 as four").all();
    expect(trips.at(-1)).toEqual(["select 'lead' as l", "select 4 as four"]);
  });

  it("makes a call that comes while the first is out wait for the lead's outcome", async () => {
    const { binding, trips } = recorded();
    let settled = false;
    const led = leadingD1(binding, lead(() => { settled = true; }));
    const first = led.d1.prepare("select 1 as a").all();
    const second = led.d1.prepare("select 2 as b").all().then((result) => [settled, result.results]);
    await first;
    expect(await second).toEqual([true, [{ b: 2 }]]);
    expect(trips.length).toBe(2);
  });

  it("sends the lead alone on request when no call took it, once", async () => {
    const { binding, trips } = recorded();
    const led = leadingD1(binding, lead());
    expect(led.sent()).toBe(false);
    await led.send();
    await led.send();
    expect(trips).toEqual([["select 'lead' as l"]]);
  });
});
