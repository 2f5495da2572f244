/**
 * A cron run's budget: the D1 queries and queue messages its jobs may spend in one invocation,
 * shared among them. Each job starts with its weight's part of what is left among the jobs not
 * yet started (a job that may have much to do weighs more), and gives back what it did not spend
 * when it ends; a job that reaches its part stops
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

  /** `weightLeft`: the weights of every job the run will start, added up. */
  constructor(total: Allowance, private weightLeft: number) {
    this.left = { ...total };
  }

  /** The next job's part: its weight's share of what is left among the jobs not yet started. */
  start(weight = 1): JobBudget {
    const share = weight / Math.max(weight, this.weightLeft);
    this.weightLeft -= weight;
    const part = { d1Queries: Math.floor(this.left.d1Queries * share), queueMessages: Math.floor(this.left.queueMessages * share) };
    this.left.d1Queries -= part.d1Queries;
    this.left.queueMessages -= part.queueMessages;
    return new JobBudget(part);
  }

  /** A job ended: what it did not spend goes back to the run. */
  end(job: JobBudget): void {
    this.left.d1Queries += job.allowed.d1Queries - job.spent.d1Queries;
    this.left.queueMessages += job.allowed.queueMessages - job.spent.queueMessages;
  }
}
