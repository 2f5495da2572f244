/**
 * Work that takes its turn per key, in this isolate: concurrent calls with the same key run one
 * after another, in the order they came. Payment events use it per payment, so concurrent events
 * on one payment wait for each other instead of racing to the write fence, where all but one
 * lose, read again and retry (measured before it: 50 connections on one payment, 40 events a
 * second, p99 4.3 s). Correctness never rests on it: writes from other isolates still meet the
 * fence, and a turn that does not end within `patience` (its request was cancelled mid-way, and
 * with it the code that would end the turn) stops holding the line.
 */
const lines = new Map<string, Promise<void>>();

export async function inTurn<T>(key: string, work: () => Promise<T>, patience = 2_000): Promise<T> {
  const before = lines.get(key);
  let end!: () => void;
  const mine = new Promise<void>((resolve) => (end = resolve));
  lines.set(key, mine);
  try {
    if (before) await waitAtMost(before, patience);
    return await work();
  } finally {
    end();
    if (lines.get(key) === mine) lines.delete(key);
  }
}

/** Keys with a line (work running or waiting): none once every turn has ended. */
export function linesOpen(): number {
  return lines.size;
}

function waitAtMost(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}
