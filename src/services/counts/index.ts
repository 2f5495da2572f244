/**
 * The counts room: how a list answers `count` without counting its matches, and how those counts
 * are kept. Its rules:
 *
 * 1. A list's `count` is one query, read in the same D1 round trip as its page (db/list-page.ts).
 *    It is the first of these that fits the list's filters:
 *    - a stored count (`stored.ts`, table `list_counts`): a list with no filter, or with one
 *      counted filter holding one value;
 *    - time buckets (`time.ts`, table `time_counts`): a list whose only filters bound one
 *      timestamp, or a payments list by one status with at most bounds on `created`. A range is the
 *      whole buckets it holds (a day, an hour, a minute, a second: `buckets.ts`) plus its two
 *      edges shorter than a second, counted on the index;
 *    - otherwise `count(*)` of the matches.
 * 2. Counterparties' and invoices' counts are written in the batch of the write that adds the row
 *    (`countOne`, `countAt`), so they are exact whenever the write is visible.
 * 3. Payments' counts are not written by a payment's change. They count every change up to a mark
 *    (`counted_to`), and a read adds the changes after it, which the change writes anyway
 *    (`payments.ts`), so they are exact too. A fold moves the mark: a write asks for one when its
 *    account's mark lags by FOLD_AFTER_MS, and the cron folds every account whose mark is behind.
 * 4. `page=N` of a list counted by its buckets starts where the buckets put it (`seek.ts`), not
 *    after an OFFSET over the rows before it.
 * Rules 1 and 4 for a list are one pure choice (`countingOf`, choice.ts); the lists build their
 * queries from what it chose.
 */
export { countKey, countOne, givenFilters, storedCountKey, storedCountQuery } from "./stored";
export { countAt, countInRange, rangeOf, timeCountField, type Buckets } from "./time";
export { seekBy } from "./seek";
export { countingOf, type CountChoice, type SeekChoice } from "./choice";
export { addedAfterMark, changesAfterMark, countedTo, selectCountedTo, foldBehindAccounts, foldPaymentCounts, FOLD_AFTER_MS } from "./payments";
