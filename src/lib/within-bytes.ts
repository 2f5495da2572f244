/**
 * How many of `sizes`, in order, fit in `budget` bytes; with `atLeastOne` (the default) the first
 * counts however large, so a step always moves on. Pure. (Moves' copy chunks, retention's steps
 * and a consumer invocation's bodies are cut by it.)
 */
export function withinBytes(sizes: readonly number[], budget: number, atLeastOne = true): number {
  let total = 0;
  for (let i = 0; i < sizes.length; i++) {
    total += sizes[i]!;
    if (total > budget) return atLeastOne ? Math.max(i, 1) : i;
  }
  return sizes.length;
}
