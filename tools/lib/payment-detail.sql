-- Each payment's detail (section 5.1) as JSON on its row, for payments a seed inserted without it
-- (every payment write stores it itself: services/payments/write-fence).
-- Stamps read as the API writes them: ISO 8601 in UTC with milliseconds. Links are keyed by their
-- invoice: each payment's list is gathered in one pass over them.
UPDATE payments SET detail = json_object(
  'id', id,
  'originating_counterparty_id', originating_counterparty_id,
  'receiving_counterparty_id', receiving_counterparty_id,
  'invoices', json(linked.invoices),
  'amount_cents', amount_cents,
  'currency', currency,
  'payment_method', payment_method,
  'status', status,
  'instrument_number', instrument_number,
  'events', json((SELECT json_group_array(json_object('id', e.id, 'event_code', e.event_code, 'status', e.status, 'description', e.description,
      'created', strftime('%Y-%m-%dT%H:%M:%S', e.created_at / 1000, 'unixepoch') || '.' || printf('%03d', e.created_at % 1000) || 'Z') ORDER BY e.seq)
    FROM payment_events e WHERE e.payment_id = payments.id)),
  'refund_reason', refund_reason,
  'version', version,
  'created', strftime('%Y-%m-%dT%H:%M:%S', created_at / 1000, 'unixepoch') || '.' || printf('%03d', created_at % 1000) || 'Z',
  'updated', strftime('%Y-%m-%dT%H:%M:%S', updated_at / 1000, 'unixepoch') || '.' || printf('%03d', updated_at % 1000) || 'Z'
) FROM (SELECT pi.payment_id, json_group_array(json_object('id', pi.invoice_id, 'invoice_number', pi.invoice_number, 'amount_cents', pi.amount_cents) ORDER BY pi.invoice_created_at, pi.invoice_id) AS invoices
  FROM payment_invoices pi GROUP BY pi.payment_id) AS linked
WHERE linked.payment_id = payments.id AND detail IS NULL;
