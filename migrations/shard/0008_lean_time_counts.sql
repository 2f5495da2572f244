-- Time buckets are kept for `created` only, a day down to a second (src/lib/time-buckets.ts): the
-- 30-day buckets and every bucket of a payment's `updated` are no longer read or written.
DELETE FROM `time_counts` WHERE `size` = 2592000000 OR `key` = 'payments.updated_at';
