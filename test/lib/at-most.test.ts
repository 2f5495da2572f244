import { describe, expect, it } from "vitest";
import { eachAtMost } from "../../src/lib/at-most";

/** Work that ends when the test says, recording how many were under way at once. */
function gate() {
  const ends = new Map<number, () => void>();
  let running = 0;
  let most = 0;
  const started: number[] = [];
  const work = (item: number) =>
    new Promise<void>((resolve) => {
      running++;
      most = Math.max(most, running);
      started.push(item);
      ends.set(item, () => {
        running--;
        resolve();
      });
    });
  const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
  return { work, end: async (item: number) => (ends.get(item)!(), await tick()), started, most: () => most, tick };
}

describe("eachAtMost", () => {
  it.each([
    [10, 3],
    [2, 5],
    [6, 6],
    [1, 1],
  ])("runs %i items at most %i at once, each as soon as a place is free, in order", async (count, limit) => {
    const g = gate();
    const items = Array.from({ length: count }, (_, i) => i);
    const done = eachAtMost(items, limit, g.work);
    await g.tick();
    expect(g.started).toEqual(items.slice(0, Math.min(limit, count)));
    for (const item of items) await g.end(item);
    await done;
    expect(g.started).toEqual(items);
    expect(g.most()).toBe(Math.min(limit, count));
  });

  it("lets the others go on past one that never ends, in the places left", async () => {
    const g = gate();
    const done = eachAtMost([0, 1, 2, 3, 4], 2, g.work);
    await g.tick();
    for (const item of [1, 2, 3, 4]) await g.end(item);
    expect(g.started).toEqual([0, 1, 2, 3, 4]);
    await g.end(0);
    await done;
  });

  it("runs nothing for no items, and rethrows a failure only once every item has ended", async () => {
    await eachAtMost([], 3, async () => expect.unreachable());
    const ran: number[] = [];
    await expect(eachAtMost([1, 2, 3], 2, async (item) => (ran.push(item), item === 1 ? Promise.reject(new Error("one")) : undefined))).rejects.toThrow("one");
    expect(ran).toEqual([1, 2, 3]);
  });
});
