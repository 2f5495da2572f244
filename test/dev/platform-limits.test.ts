import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CLOUDFLARE, InvocationBudget, PlatformLimitError } from "../../src/dev/invocation-budget";
import { limitedD1, limitedEnv, writes } from "../../src/dev/limited-bindings";
import { widestFunctionCall } from "../../src/dev/sql-functions";
import { withinLimits } from "../../src/dev/within-limits";
import {
  D1_MAX_FUNCTION_ARGUMENTS,
  D1_MAX_RESULT_BYTES,
  D1_MAX_VALUE_BYTES,
  D1_QUERIES_PER_INVOCATION,
  SIMULTANEOUS_CONNECTIONS,
  SUBREQUESTS_PER_INVOCATION,
} from "../../src/lib/platform-limits";
import { call, makeTenant } from "../helpers/api";

const args = (n: number) => Array.from({ length: n }, (_, i) => `?${i + 1}`).join(", ");

describe("the widest SQL function call", () => {
  it.each([
    ["no call", "select a, b from t where c = ?", 0],
    ["a call", "select coalesce(a, b, 0) from t", 3],
    ["an empty call", "select random()", 0],
    ["count(*)", "select count(*) from t", 1],
    ["nested, the outer counted apart", "select max(json_array(1, 2, 3, 4), 0)", 4],
    ["an in list is not a call", `select 1 from t where a in (${args(40)})`, 0],
    ["values and a column list are not calls", `insert into t (${Array.from({ length: 40 }, (_, i) => `c${i}`).join(", ")}) values (${args(40)})`, 0],
    ["a call inside values", "insert into t (a) values (json_object('a', 1, 'b', 2))", 4],
    ["commas in strings are not arguments", "select printf('%s, %s, %s', a, b)", 3],
    ["quoted names are not calls", `select "json_array"(1) from t`, 0],
    ["a subquery is not a call", "select (select max(a) from t)", 1],
    ["json_object of 16 pairs", `select json_object(${args(32)})`, 32],
    ["json_object of 17 pairs", `select json_object(${args(34)})`, 34],
    ["an index's columns are not a call", "create index i on t (a, b, c)", 0],
  ])("%s", (_name, sql, widest) => {
    expect(widestFunctionCall(sql)).toBe(widest);
  });
});

describe("the development layer bites at each of Cloudflare's limits", () => {
  it(`lets ${SIMULTANEOUS_CONNECTIONS} connections wait at once; the next waits for one of them to answer`, async () => {
    const budget = new InvocationBudget();
    const answers: (() => void)[] = [];
    const started: number[] = [];
    const connections = Array.from({ length: SIMULTANEOUS_CONNECTIONS + 1 }, (_, i) =>
      budget.connection(async () => {
        started.push(i);
        await new Promise<void>((done) => answers.push(done));
      }),
    );
    await new Promise((done) => setTimeout(done, 0));
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    answers[2]!();
    await connections[2];
    await new Promise((done) => setTimeout(done, 0));
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(budget.figures).toMatchObject({ peakConnections: SIMULTANEOUS_CONNECTIONS, waitedConnections: 1 });
    answers.forEach((answer) => answer());
    await Promise.all(connections);
  });

  it(`refuses a D1 query past ${D1_QUERIES_PER_INVOCATION} in one invocation, each statement of a batch counted`, async () => {
    const d1 = limitedD1(env.DB, new InvocationBudget());
    const results = await d1.batch(Array.from({ length: D1_QUERIES_PER_INVOCATION }, () => d1.prepare("select 1")));
    expect(results).toHaveLength(D1_QUERIES_PER_INVOCATION);
    await expect(d1.prepare("select 1").first()).rejects.toThrow(PlatformLimitError);
  });

  it(`refuses a subrequest past ${SUBREQUESTS_PER_INVOCATION} in one invocation`, async () => {
    const sent: unknown[] = [];
    const queue = { send: async (body: unknown) => void sent.push(body), sendBatch: async () => {} };
    const limited = limitedEnv({ DELIVERIES: queue as unknown as Queue }, new InvocationBudget());
    for (let i = 0; i < SUBREQUESTS_PER_INVOCATION; i++) await limited.DELIVERIES.send(i);
    await expect(limited.DELIVERIES.send("one more")).rejects.toThrow(PlatformLimitError);
    expect(sent).toHaveLength(SUBREQUESTS_PER_INVOCATION);
  });

  it(`refuses a bound value over ${D1_MAX_VALUE_BYTES} bytes, which local D1 would take`, async () => {
    const d1 = limitedD1(env.DB, new InvocationBudget());
    expect(await d1.prepare("select length(?) as n").bind("x".repeat(D1_MAX_VALUE_BYTES)).first("n")).toBe(D1_MAX_VALUE_BYTES);
    expect(() => d1.prepare("select length(?) as n").bind("x".repeat(D1_MAX_VALUE_BYTES + 1))).toThrow(PlatformLimitError);
    expect(
      await env.DB.prepare("select length(?) as n")
        .bind("x".repeat(D1_MAX_VALUE_BYTES + 1))
        .first("n"),
    ).toBe(D1_MAX_VALUE_BYTES + 1);
  });

  it(`refuses a SQL function of more than ${D1_MAX_FUNCTION_ARGUMENTS} arguments, which local D1 would run`, async () => {
    const d1 = limitedD1(env.DB, new InvocationBudget());
    const values = (n: number) => Array.from({ length: n }, (_, i) => i);
    expect(
      JSON.parse(
        (await d1
          .prepare(`select json_array(${args(32)}) as a`)
          .bind(...values(32))
          .first<string>("a"))!,
      ),
    ).toEqual(values(32));
    expect(() => d1.prepare(`select json_array(${args(33)}) as a`)).toThrow(PlatformLimitError);
    expect(
      JSON.parse(
        (await env.DB.prepare(`select json_array(${args(33)}) as a`)
          .bind(...values(33))
          .first<string>("a"))!,
      ),
    ).toEqual(values(33));
  });

  it(`refuses a D1 result over ${D1_MAX_RESULT_BYTES / 1e6} MB`, async () => {
    const d1 = limitedD1(env.DB, new InvocationBudget());
    const rows = (n: number) => `with recursive n(i) as (select 1 union all select i + 1 from n where i < ${n}) select i, hex(zeroblob(950000)) as big from n`;
    expect((await d1.prepare(rows(5)).all()).results).toHaveLength(5);
    await expect(d1.prepare(rows(27)).all()).rejects.toThrow(PlatformLimitError);
  });

  it("cuts the work an invocation left in waitUntil once its time after the event is up", async () => {
    const ctx = createExecutionContext();
    let later!: Promise<unknown>;
    let budget!: InvocationBudget;
    await withinLimits(
      env,
      ctx,
      async (invocation) => {
        budget = invocation.budget;
        later = (async () => {
          await invocation.budget.cut;
          return invocation.env.DB.prepare("select 1").first();
        })();
        invocation.ctx.waitUntil(later.catch(() => {}));
        return invocation.env.DB.prepare("select 1 as one").first("one");
      },
      { limits: { ...CLOUDFLARE, waitUntilMs: 10 } },
    );
    await expect(later).rejects.toThrow(/waitUntil went on past/);
    expect(budget.figures.d1Calls).toBe(1);
    await waitOnExecutionContext(ctx);
  });

  it.each([
    ["the binding itself (the consumer, the cron): the primary", null, ["select 1", "select 1"], [false, false]],
    ["a first-primary session: its first read the primary, later reads a replica", "first-primary", ["select 1", "select 1", "select 1"], [false, true, true]],
    ["a first-unconstrained session: every read a replica", "first-unconstrained", ["select 1", "select 1"], [true, true]],
    [
      "a write: the primary in any session",
      "first-unconstrained",
      ["insert into auth_failures (key, window_start, failures) values ('platform-limits-test', 0, 1) on conflict do nothing", "select 1"],
      [false, true],
    ],
  ])("counts the round trips a read replica may serve: %s", async (_name, constraint, sqls, replica) => {
    const budget = new InvocationBudget();
    const d1 = limitedD1(env.DB, budget);
    const session = constraint === null ? d1 : d1.withSession(constraint as D1SessionConstraint);
    const seen: boolean[] = [];
    for (const sql of sqls) {
      const before = budget.figures.d1ReplicaCalls;
      await session.prepare(sql).run();
      seen.push(budget.figures.d1ReplicaCalls > before);
    }
    expect(seen).toEqual(replica);
  });

  it.each([
    ["insert into t values (1)", true],
    ["  UPDATE t set a = 1", true],
    ["delete from t", true],
    ["with x as (select 1) insert into t select * from x", true],
    ["select * from t where a = 'insert'", false],
    ["select 1", false],
  ])("tells a write from a read: %s", (sql, write) => {
    expect(writes(sql)).toBe(write);
  });

  it("runs every request of the suite under the layer: a request reports its figures beside the D1 tally", async () => {
    const { client } = await makeTenant();
    const response = await call("GET", "/v1/counterparties/", { headers: client.headers, bindings: { SERVER_TIMING: "true" } });
    expect(response.status).toBe(200);
    const timing = response.headers.get("server-timing") ?? "";
    expect(timing).toMatch(/d1-calls;desc="\d+"/);
    expect(timing).toMatch(/cf-connections-peak;desc="[1-6]"/);
    expect(timing).toMatch(/cf-d1-queries;desc="[1-9]\d*"/);
  });
});
