import { describe, expect, it } from "vitest";
import { BudgetSpent, RunBudget } from "../../src/lib/run-budget";

describe("a cron run's budget", () => {
  it("gives each job an equal part of what is left among the jobs not yet started, and takes back what a job did not spend", () => {
    const run = new RunBudget({ d1Queries: 900, queueMessages: 9000 }, { d1Queries: 3, queueMessages: 3 });
    const first = run.start();
    expect(first.allowed).toEqual({ d1Queries: 300, queueMessages: 3000 });
    first.spend("d1Queries", 100);
    run.end(first);
    const second = run.start();
    expect(second.allowed).toEqual({ d1Queries: 400, queueMessages: 4500 });
    run.end(second);
    expect(run.start().allowed).toEqual({ d1Queries: 800, queueMessages: 9000 });
  });

  it.each([
    ["within its part", 300, 1, false],
    ["one past its part", 300, 301, true],
  ])("stops a job that would spend past its part: %s", (_name, part, spending, stops) => {
    const job = new RunBudget({ d1Queries: part, queueMessages: 0 }, { d1Queries: 1, queueMessages: 1 }).start();
    const spend = () => job.spend("d1Queries", spending);
    if (stops) expect(spend).toThrow(BudgetSpent);
    else expect(spend).not.toThrow();
    expect(job.stopped).toBe(stops);
    expect(job.spent.d1Queries).toBe(stops ? 0 : spending);
  });

  it("gives a job that weighs more its weight's part, of each kind apart", () => {
    const run = new RunBudget({ d1Queries: 900, queueMessages: 1000 }, { d1Queries: 1 + 4 + 1, queueMessages: 0 + 0 + 2 });
    expect(run.start({ d1Queries: 1, queueMessages: 0 }).allowed).toEqual({ d1Queries: 150, queueMessages: 0 });
    expect(run.start({ d1Queries: 4, queueMessages: 0 }).allowed).toEqual({ d1Queries: 600, queueMessages: 0 });
    expect(run.start({ d1Queries: 1, queueMessages: 2 }).allowed).toEqual({ d1Queries: 150, queueMessages: 1000 });
  });

  it("never gives more than the run has, however many jobs end early", () => {
    const run = new RunBudget({ d1Queries: 10, queueMessages: 10 }, { d1Queries: 4, queueMessages: 4 });
    const parts = [run.start(), run.start(), run.start(), run.start()].map((job) => job.allowed.d1Queries);
    expect(parts.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10);
  });
});
