/**
 * A cron run's budget: the D1 queries and queue messages its jobs may spend in one invocation,
 * shared among them. Pure. Three rules make every job progress under any share:
 *
 * - **Shares.** Each job starts with its weight's part of what is left among the jobs not yet
 *   started, for each kind (a job that may have much to do weighs more; one that sends no message
 *   weighs nothing in messages), and gives back what it did not spend when it ends.
 * - **Floors and turns.** A job's part is never less than its floor: the D1 queries its smallest
 *   unit of work costs, plus its reserve. When what is left cannot give a job its floor, the job
 *   waits its turn (start() answers null); the run's jobs are taken in an order that turns by one
 *   place each run (`inTurn`), so every job is first at least once in as many runs as there are
 *   jobs, and the first job always gets its floor.
 * - **Bookkeeping outside the budget it guards.** Work (`spend`) stops at its part less the
 *   reserve, with BudgetSpent, at its next D1 call or send; the next run goes on where it stopped.
 *   Bookkeeping (`keep`: a lease's release, a progress save, a removal whose archive is written)
 *   is counted and never refused: it comes out of the reserve, which each job sizes for the
 *   bookkeeping it does after its last piece of work.
 */
export class BudgetSpent extends Error {
  override name = "BudgetSpent";
}

export interface Allowance {
  d1Queries: number;
  queueMessages: number;
}

/** What a job asks of a run: its weights in the shares, and the D1 queries of its floor and reserve. */
export interface JobWeight extends Allowance {
  /** D1 queries of the job's smallest unit of work (its reserve aside). */
  floor: number;
  /** D1 queries kept for the bookkeeping after its last piece of work. */
  reserve: number;
}

export class JobBudget {
  readonly spent: Allowance = { d1Queries: 0, queueMessages: 0 };
  /** The D1 round trips those queries took (a batch is one): reported, not limited. */
  d1Calls = 0;
  stopped = false;

  /** `allowed`: the job's part, its reserve included. */
  constructor(
    readonly allowed: Allowance,
    readonly reserve = 0,
  ) {}

  /** What work may still spend of `kind` (the reserve is not for work). */
  left(kind: keyof Allowance): number {
    return Math.max(0, this.allowed[kind] - (kind === "d1Queries" ? this.reserve : 0) - this.spent[kind]);
  }

  /** Work spends `n` of `kind`, or the job stops when that would pass its part less the reserve. */
  spend(kind: keyof Allowance, n: number): void {
    if (n > this.left(kind)) {
      this.stopped = true;
      throw new BudgetSpent(`the cron run's budget of ${kind} for this job (${this.allowed[kind]}) is spent; the next run goes on`);
    }
    this.spent[kind] += n;
  }

  /** Bookkeeping spends `n` of `kind`: counted, never refused. */
  keep(kind: keyof Allowance, n: number): void {
    this.spent[kind] += n;
  }

  /** Whether bookkeeping went past the job's whole part: its reserve was sized too small. */
  get overdrawn(): boolean {
    return this.spent.d1Queries > this.allowed.d1Queries || this.spent.queueMessages > this.allowed.queueMessages;
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

  /**
   * The next job's part: for each kind, its weight's share of what is left among the jobs not yet
   * started, and in D1 queries at least its floor and reserve; null when what is left cannot give
   * that (the job waits its turn).
   */
  start(weight: JobWeight = { d1Queries: 1, queueMessages: 1, floor: 0, reserve: 0 }): JobBudget | null {
    const share = (kind: keyof Allowance) => {
      const part = Math.floor(this.left[kind] * (weight[kind] / Math.max(weight[kind], this.weightLeft[kind], 1)));
      this.weightLeft[kind] -= weight[kind];
      return part;
    };
    const least = weight.floor + weight.reserve;
    const queries = Math.min(this.left.d1Queries, Math.max(least, share("d1Queries")));
    const messages = share("queueMessages");
    if (queries < least) return null;
    this.left.d1Queries -= queries;
    this.left.queueMessages -= messages;
    return new JobBudget({ d1Queries: queries, queueMessages: messages }, weight.reserve);
  }

  /** A job ended: what it did not spend goes back to the run. */
  end(job: JobBudget): void {
    this.left.d1Queries += job.allowed.d1Queries - job.spent.d1Queries;
    this.left.queueMessages += job.allowed.queueMessages - job.spent.queueMessages;
  }
}

/** The jobs in run `run`'s order: turned by one place a run, so each is first once in `jobs.length` runs. Pure. */
export function inTurn<T>(jobs: readonly T[], run: number): T[] {
  if (jobs.length === 0) return [];
  const first = ((run % jobs.length) + jobs.length) % jobs.length;
  return [...jobs.slice(first), ...jobs.slice(0, first)];
}

/** Whether an error is (or was caused by) a job's budget being spent: the job stops, and is not failing. */
export function isBudgetSpent(error: unknown): boolean {
  for (let each = error, depth = 0; each && depth < 8; each = (each as { cause?: unknown }).cause, depth++) {
    if (each instanceof BudgetSpent || (each as Error).name === "BudgetSpent") return true;
  }
  return false;
}
