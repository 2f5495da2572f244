/**
 * Runs `work` on every item with at most `limit` of them under way at once, starting each next one
 * as soon as one ends, in the items' order; resolves when all have ended. A failure of one is its
 * own to handle: `work` should not throw (a throw stops no other item, and is rethrown at the end).
 */
export async function eachAtMost<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await work(item).catch((error) => void failures.push(error));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failures.length > 0) throw failures[0];
}

/**
 * The same as a pool that takes items while it runs: `add` queues an item (started at once if fewer
 * than `limit` are under way), `busy` says how many are under way or queued, and `idle()` resolves
 * once none is (throwing the first failure, as above). Items added after `idle()` resolved start a
 * new round.
 */
export function atMost<T>(limit: number, work: (item: T) => Promise<void>) {
  const queued: T[] = [];
  const failures: unknown[] = [];
  let running = 0;
  let waiters: (() => void)[] = [];
  const pump = () => {
    while (running < limit && queued.length > 0) {
      const item = queued.shift()!;
      running++;
      void work(item)
        .catch((error) => void failures.push(error))
        .finally(() => {
          running--;
          pump();
        });
    }
    if (running === 0 && queued.length === 0) {
      const wake = waiters;
      waiters = [];
      for (const resolve of wake) resolve();
    }
  };
  return {
    add(item: T): void {
      queued.push(item);
      pump();
    },
    get busy(): number {
      return running + queued.length;
    },
    async idle(): Promise<void> {
      if (running > 0 || queued.length > 0) await new Promise<void>((resolve) => waiters.push(resolve));
      if (failures.length > 0) throw failures.splice(0)[0];
    },
  };
}
