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
