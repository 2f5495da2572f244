-- Each existing event gets the payment's instrument number and refund reason as they are now. For a
-- payment's latest event that is exact; earlier events' bodies were stored with their deliveries
-- (flags null), so nothing rebuilds them. The refund reason belongs to refunded events only.
UPDATE `payment_events` SET
  `instrument_number` = (SELECT p.`instrument_number` FROM `payments` p WHERE p.`id` = `payment_events`.`payment_id`),
  `refund_reason` = CASE WHEN `status` = 'refunded' THEN (SELECT p.`refund_reason` FROM `payments` p WHERE p.`id` = `payment_events`.`payment_id`) END;
