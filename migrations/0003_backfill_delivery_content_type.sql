-- Custom SQL migration file, put your code below! --
-- Deliveries made before content_type was frozen with the body were encoded in their
-- subscription's content type of the time; the subscription's current one is the best record left.
UPDATE `webhook_deliveries` SET `content_type` = (
  SELECT `content_type` FROM `webhook_subscriptions` WHERE `webhook_subscriptions`.`id` = `webhook_deliveries`.`subscription_id`
);
