import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BudgetSpent, inTurn, isBudgetSpent, JobBudget, RunBudget, type JobWeight } from "../../src/lib/run-budget";

const weight = (d1Queries: number, queueMessages: number, floor = 0, reserve = 0): JobWeight => ({ d1Queries, queueMessages, floor, reserve });
const started = (run: RunBudget, w?: JobWeight) => {
  const job = run.start(w);
  if (!job) throw new Error("the job waits its turn");
  return job;
};

describe("a cron run's budget", () => {
  it("gives each job an equal part of what is left among the jobs not yet started, and takes back what a job did not spend", () => {
    const run = new RunBudget({ d1Queries: 900, queueMessages: 9000 }, { d1Queries: 3, queueMessages: 3 });
    const first = started(run);
    expect(first.allowed).toEqual({ d1Queries: 300, queueMessages: 3000 });
    first.spend("d1Queries", 100);
    run.end(first);
    const second = started(run);
    expect(second.allowed).toEqual({ d1Queries: 400, queueMessages: 4500 });
    run.end(second);
    expect(started(run).allowed).toEqual({ d1Queries: 800, queueMessages: 9000 });
  });

  it.each([
    ["within its part", 300, 0, 1, false],
    ["at its part", 300, 0, 300, false],
    ["one past its part", 300, 0, 301, true],
    ["into its reserve", 300, 10, 291, true],
    ["up to its reserve", 300, 10, 290, false],
  ])("stops work that would spend past its part less its reserve: %s", (_name, part, reserve, spending, stops) => {
    const job = new JobBudget({ d1Queries: part, queueMessages: 0 }, reserve);
    const spend = () => job.spend("d1Queries", spending);
    if (stops) expect(spend).toThrow(BudgetSpent);
    else expect(spend).not.toThrow();
    expect(job.stopped).toBe(stops);
    expect(job.spent.d1Queries).toBe(stops ? 0 : spending);
  });

  it("counts bookkeeping and never refuses it, and says when it passed the whole part", () => {
    const job = new JobBudget({ d1Queries: 10, queueMessages: 0 }, 3);
    job.spend("d1Queries", 7);
    expect(() => job.spend("d1Queries", 1)).toThrow(BudgetSpent);
    job.keep("d1Queries", 3);
    expect(job.spent.d1Queries).toBe(10);
    expect(job.overdrawn).toBe(false);
    job.keep("d1Queries", 1);
    expect(job.overdrawn).toBe(true);
  });

  it("gives a job that weighs more its weight's part, of each kind apart", () => {
    const run = new RunBudget({ d1Queries: 900, queueMessages: 1000 }, { d1Queries: 1 + 4 + 1, queueMessages: 0 + 0 + 2 });
    expect(started(run, weight(1, 0)).allowed).toEqual({ d1Queries: 150, queueMessages: 0 });
    expect(started(run, weight(4, 0)).allowed).toEqual({ d1Queries: 600, queueMessages: 0 });
    expect(started(run, weight(1, 2)).allowed).toEqual({ d1Queries: 150, queueMessages: 1000 });
  });

  it.each([
    ["a share above its floor", 900, 9, 50, 0, 100],
    ["its floor over a smaller share", 900, 90, 50, 0, 50],
    ["its floor and reserve over a smaller share", 900, 90, 50, 5, 55],
    ["what is left when that covers the floor", 60, 1, 50, 5, 60],
  ])("gives a job %s", (_name, total, weights, floor, reserve, part) => {
    const run = new RunBudget({ d1Queries: total, queueMessages: 0 }, { d1Queries: weights, queueMessages: 0 });
    expect(started(run, weight(1, 0, floor, reserve)).allowed.d1Queries).toBe(part);
  });

  it("keeps a job waiting its turn when what is left cannot give its floor", () => {
    const run = new RunBudget({ d1Queries: 100, queueMessages: 0 }, { d1Queries: 2, queueMessages: 0 });
    const first = started(run, weight(1, 0, 80));
    expect(first.allowed.d1Queries).toBe(80);
    expect(run.start(weight(1, 0, 30))).toBeNull();
  });

  it("never gives more than the run has, however many jobs end early", () => {
    const run = new RunBudget({ d1Queries: 10, queueMessages: 10 }, { d1Queries: 4, queueMessages: 4 });
    const parts = [run.start(), run.start(), run.start(), run.start()].map((job) => job?.allowed.d1Queries ?? 0);
    expect(parts.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10);
  });

  it.each([
    [0, ["a", "b", "c"]],
    [1, ["b", "c", "a"]],
    [2, ["c", "a", "b"]],
    [3, ["a", "b", "c"]],
    [-1, ["c", "a", "b"]],
  ])("turns the jobs' order by one place a run: run %i", (run, order) => {
    expect(inTurn(["a", "b", "c"], run)).toEqual(order);
  });

  it("serves every job within as many runs as there are jobs, however many jobs and however little the run holds, when every job spends all it gets", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ w: fc.integer({ min: 1, max: 5 }), floor: fc.integer({ min: 1, max: 400 }), reserve: fc.integer({ min: 0, max: 6 }) }), {
          minLength: 1,
          maxLength: 120,
        }),
        fc.integer({ min: 0, max: 10_000 }),
        (jobs, firstRun) => {
          const served = new Set<number>();
          for (let run = firstRun; run < firstRun + jobs.length; run++) {
            const order = inTurn(
              jobs.map((_, i) => i),
              run,
            );
            const budget = new RunBudget({ d1Queries: 900, queueMessages: 0 }, { d1Queries: jobs.reduce((sum, job) => sum + job.w, 0), queueMessages: 0 });
            for (const i of order) {
              const job = budget.start(weight(jobs[i]!.w, 0, jobs[i]!.floor, jobs[i]!.reserve));
              if (!job) continue;
              expect(job.allowed.d1Queries).toBeGreaterThanOrEqual(jobs[i]!.floor + jobs[i]!.reserve);
              served.add(i);
              job.keep("d1Queries", job.allowed.d1Queries);
              budget.end(job);
            }
          }
          expect(served.size).toBe(jobs.length);
        },
      ),
    );
  });

  it.each([
    ["BudgetSpent", new BudgetSpent("spent"), true],
    ["its cause, as drizzle wraps it", new Error("Failed query", { cause: new Error("D1", { cause: new BudgetSpent("spent") }) }), true],
    ["another error", new Error("D1 went away"), false],
  ])("tells a stop for budget from a failure: %s", (_name, error, spent) => {
    expect(isBudgetSpent(error)).toBe(spent);
  });
});
