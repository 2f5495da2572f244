/**
 * A cron run's budget: the D1 queries and queue messages its jobs may spend in one invocation,
 * shared among them. Each job starts with its weight's part of what is left among the jobs not
 * yet started, for each kind (a job that may have much to do weighs more; one that sends no
 * message weighs nothing in messages), and gives back what it did not spend when it ends; a job that reaches its part stops
 * there (BudgetSpent, at its next D1 call or send) and the next run goes on where it stopped,
 * as after a D1 error: every job is bounded and resumable. Pure.
 */
export class BudgetSpent extends Error {
  override name = "BudgetSpent";
}

export interface Allowance {
  d1Queries: number;
  queueMessages: number;
}

export class JobBudget {
  readonly spent: Allowance = { d1Queries: 0, queueMessages: 0 };
  /** The D1 round trips those queries took (a batch is one): reported, not limited. */
  d1Calls = 0;
  stopped = false;

  constructor(readonly allowed: Allowance) {}

  /** Spends `n` of `kind`, or stops the job when that would pass its part. */
  spend(kind: keyof Allowance, n: number): void {
    if (this.spent[kind] + n > this.allowed[kind]) {
      this.stopped = true;
      throw new BudgetSpent(`the cron run's budget of ${kind} for this job (${this.allowed[kind]}) is spent; the next run goes on`);
    }
    this.spent[kind] += n;
  }
}

export class RunBudget {
  private readonly left: Allowance;
  private readonly weightLeft: Allowance;

  /** `weights`: the weights of every job the run will start, added up, for each kind. */
  constructor(total: Allowance, weights: Allowance) {
    this.left = { ...total };
    this.weightLeft = { ...weights };
  }

  /** The next job's part: for each kind, its weight's share of what is left among the jobs not yet started. */
  start(weight: Allowance = { d1Queries: 1, queueMessages: 1 }): JobBudget {
    const part = (kind: keyof Allowance) => {
      const share = weight[kind] / Math.max(weight[kind], this.weightLeft[kind], 1);
      this.weightLeft[kind] -= weight[kind];
      const taken = Math.floor(this.left[kind] * share);
      this.left[kind] -= taken;
      return taken;
    };
    return new JobBudget({ d1Queries: part("d1Queries"), queueMessages: part("queueMessages") });
  }

  /** A job ended: what it did not spend goes back to the run. */
  end(job: JobBudget): void {
    this.left.d1Queries += job.allowed.d1Queries - job.spent.d1Queries;
    this.left.queueMessages += job.allowed.queueMessages - job.spent.queueMessages;
  }
}
