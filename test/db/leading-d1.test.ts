import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
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
  const lead = (settle: Lead["settle"] = () => {}): Lead => ({ statements: (d1) => [d1.prepare("select 'lead' as l")], settle });

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

  it("sends them alone, first, when the first round trip writes", async () => {
    const { binding, trips } = recorded();
    const led = leadingD1(binding, lead());
    await led.d1.batch([led.d1.prepare("create table if not exists leading_probe (a)"), led.d1.prepare("select 1")]);
    expect(trips).toEqual([["select 'lead' as l"], ["create table if not exists leading_probe (a)", "select 1"]]);
  });

  it("stops the caller, and every call after, when settle throws; nothing of theirs runs", async () => {
    const { binding, trips } = recorded();
    const led = leadingD1(binding, lead(() => { throw new Error("decided"); }));
    await expect(led.d1.prepare("insert into nowhere values (1)").run()).rejects.toThrow("decided");
    await expect(led.d1.prepare("select 1").all()).rejects.toThrow("decided");
    expect(trips).toEqual([["select 'lead' as l"]]);
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
