import { describe, expect, it } from "vitest";
import { allAttempts, ATTEMPTS_SHOWN, type AttemptRow, type DeliveryRow } from "../../src/webhooks/subscriptions/deliveries";

const row = (first: Partial<DeliveryRow>) =>
  ({
    id: "d1",
    attempts: 3,
    firstStartedAt: null,
    firstDurationMs: null,
    firstResponseStatus: null,
    firstError: null,
    firstResponseExcerpt: null,
    firstEnded: null,
    firstHeaders: null,
    ...first,
  }) as DeliveryRow;
const logged = (number: number, responseStatus: number): AttemptRow => ({
  deliveryId: "d1",
  number,
  startedAt: 1000 * number,
  durationMs: 5,
  responseStatus,
  error: null,
  responseExcerpt: null,
  ended: 1,
  headers: null,
});

describe("allAttempts", () => {
  it.each([
    ["never attempted", row({}), [], []],
    [
      "a first attempt on the row",
      row({ firstStartedAt: 500, firstDurationMs: 7, firstResponseStatus: 500, firstError: "HTTP 500", firstEnded: 1 }),
      [],
      [[1, 500]],
    ],
    [
      "a first attempt on the row, then later ones",
      row({ firstStartedAt: 500, firstResponseStatus: 500, firstEnded: 1 }),
      [logged(2, 503), logged(3, 200)],
      [
        [1, 500],
        [2, 503],
        [3, 200],
      ],
    ],
    ["a first attempt under way (not ended)", row({ firstStartedAt: 500, firstDurationMs: 0, firstEnded: 0 }), [], [[1, null]]],
    [
      "every attempt in the table (a row from before the row kept its first)",
      row({}),
      [logged(1, 500), logged(2, 200)],
      [
        [1, 500],
        [2, 200],
      ],
    ],
    [
      `more than ${ATTEMPTS_SHOWN}: the latest ${ATTEMPTS_SHOWN}, without the row's first`,
      row({ attempts: ATTEMPTS_SHOWN + 5, firstStartedAt: 500, firstResponseStatus: 500, firstEnded: 1 }),
      Array.from({ length: ATTEMPTS_SHOWN }, (_, i) => logged(i + 6, 429)),
      Array.from({ length: ATTEMPTS_SHOWN }, (_, i) => [i + 6, 429]),
    ],
    [
      `exactly ${ATTEMPTS_SHOWN}: the row's first among them`,
      row({ attempts: ATTEMPTS_SHOWN, firstStartedAt: 500, firstResponseStatus: 500, firstEnded: 1 }),
      Array.from({ length: ATTEMPTS_SHOWN - 1 }, (_, i) => logged(i + 2, 429)),
      [[1, 500], ...Array.from({ length: ATTEMPTS_SHOWN - 1 }, (_, i) => [i + 2, 429])],
    ],
  ])("%s", (_, delivery, table, expected) => {
    expect(allAttempts(delivery, table).map((attempt) => [attempt.number, attempt.responseStatus])).toEqual(expected);
  });

  it("shows the row's first attempt as the table would", () => {
    const [first] = allAttempts(
      row({
        firstStartedAt: 500,
        firstDurationMs: 7,
        firstResponseStatus: 200,
        firstError: null,
        firstResponseExcerpt: "ok",
        firstEnded: 1,
        firstHeaders: "{}",
      }),
      [],
    );
    expect(first).toEqual({
      deliveryId: "d1",
      number: 1,
      startedAt: 500,
      durationMs: 7,
      responseStatus: 200,
      error: null,
      responseExcerpt: "ok",
      ended: 1,
      headers: "{}",
    });
  });
});
