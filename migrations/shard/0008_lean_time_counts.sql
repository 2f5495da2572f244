-- Time buckets go from a day down to a second (src/lib/time-buckets.ts): the 30-day buckets are no
-- longer read or written.
DELETE FROM `time_counts` WHERE `size` = 2592000000;
