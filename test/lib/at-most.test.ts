import { describe, expect, it } from "vitest";
import { atMost, eachAtMost } from "../../src/lib/at-most";

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

describe("atMost", () => {
  it("takes items while it runs: starts each at once while a place is free, queues the rest, and says how many are busy", async () => {
    const g = gate();
    const pool = atMost(2, g.work);
    pool.add(0);
    pool.add(1);
    pool.add(2);
    await g.tick();
    expect(g.started).toEqual([0, 1]);
    expect(pool.busy).toBe(3);
    await g.end(0);
    expect(g.started).toEqual([0, 1, 2]);
    pool.add(3); // added while it runs: queued behind the two under way
    expect(pool.busy).toBe(3);
    const idle = pool.idle();
    for (const item of [1, 2, 3]) await g.end(item);
    await idle;
    expect(pool.busy).toBe(0);
    expect(g.most()).toBe(2);
    pool.add(4); // a new round after idle
    await g.tick();
    expect(g.started).toEqual([0, 1, 2, 3, 4]);
    await g.end(4);
    await pool.idle();
  });

  it("is idle at once with nothing added, and throws the first failure when idle, once", async () => {
    const pool = atMost(2, async (item: number) => (item === 1 ? Promise.reject(new Error("one")) : undefined));
    await pool.idle();
    pool.add(1);
    pool.add(2);
    await expect(pool.idle()).rejects.toThrow("one");
    await pool.idle();
  });
});
