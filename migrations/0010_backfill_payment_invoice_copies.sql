-- Custom SQL migration file, put your code below! --
-- Each payment's invoices copied onto its links (db/schema/payment-invoices), once for the links
-- that exist; from here on the payment write copies them itself.
UPDATE payment_invoices SET invoice_number = i.invoice_number, amount_cents = i.amount_cents, invoice_created_at = i.created_at FROM invoices i WHERE i.id = payment_invoices.invoice_id;
