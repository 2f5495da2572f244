import { describe, expect, it } from "vitest";
import { calendar, LAST_ROUND, ROUND_MS } from "../../src/webhooks/rounds";

const START = 1_000 * ROUND_MS; // the start of a round

describe("a calendar of rounds", () => {
  // [case, bookings made before (ms after START, from, limit), the one asked (ms after START, from, limit), rounds away]
  type Booking = [number, number, number];
  const cases: [string, Booking[], Booking, number][] = [
    ["an empty calendar, from this round", [], [0, 0, 2], 0],
    ["an empty calendar, from the next round", [], [0, 1, 2], 1],
    ["this round has room", [[0, 0, 2]], [0, 0, 2], 0],
    ["this round is full", [[0, 0, 2], [0, 0, 2]], [0, 0, 2], 1],
    ["full rounds are skipped, in order", [[0, 1, 1], [0, 1, 1], [0, 1, 1]], [0, 1, 1], 4],
    ["a round's bookings count with any limit", [[0, 1, 5], [0, 1, 5]], [0, 1, 2], 2],
    ["later in the same round", [[0, 0, 1]], [ROUND_MS - 1, 0, 1], 1],
    ["a round later, the booked round is this one", [[0, 1, 1]], [ROUND_MS, 0, 1], 1],
    ["a past round is forgotten", [[0, 0, 1]], [ROUND_MS, 0, 1], 0],
    ["never further than the last round", Array(LAST_ROUND + 5).fill([0, 1, 1]), [0, 1, 1], LAST_ROUND],
    ["asked beyond the last round", [], [0, LAST_ROUND + 10, 1], LAST_ROUND],
  ];
  it.each(cases)("%s", (_name, before, [at, from, limit], expected) => {
    const rounds = calendar();
    for (const [when, after, most] of before) rounds.book("sub", after, most, START + when);
    expect(rounds.book("sub", from, limit, START + at)).toBe(expected);
  });

  it("keeps each subscription's rounds apart", () => {
    const rounds = calendar();
    expect(rounds.book("a", 0, 1, START)).toBe(0);
    expect(rounds.book("b", 0, 1, START)).toBe(0);
    expect(rounds.book("a", 0, 1, START)).toBe(1);
  });

  it("forgets subscriptions whose rounds are all past once it keeps many", () => {
    const rounds = calendar();
    for (let i = 0; i < 1000; i++) rounds.book(`old-${i}`, 0, 1, START);
    expect(rounds.size()).toBe(1000);
    rounds.book("new", 0, 1, START + 2 * ROUND_MS);
    expect(rounds.size()).toBe(1);
  });
});
