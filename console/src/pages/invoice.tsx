import { api, apiPath } from "../api";
import { money, when } from "../format";
import { useLoad } from "../parts/load";
import { counterparties } from "../parts/names";
import { Badge, Card, Party, RecordPage } from "../parts/ui";
import type { InvoiceDetail, Payment } from "./types";

/** One invoice, with its buyer and supplier by name, and the payment that covers it with its status. */
export function InvoicePage({ id }: { id: string }) {
  const invoice = useLoad(async () => {
    const row = await api<InvoiceDetail>("GET", apiPath`/v1/invoices/${id}/`);
    const [names, payment] = await Promise.all([
      counterparties([row.buyer_id, row.supplier_id]),
      row.payment_id ? api<Payment>("GET", apiPath`/v2/payments/${row.payment_id}/`) : null,
    ]);
    return { row, names, payment };
  }, id);
  return (
    <RecordPage section="Invoices" path="/invoices" noun="invoice" loaded={invoice}>
      {(found) => (
        <>
          <div class="page-head">
            <div>
              <h1 tabIndex={-1}>Invoice {found.row.invoice_number}</h1>
              <div class="badges">
                <span class="mono small muted">{found.row.id}</span>
              </div>
            </div>
          </div>
          <Card>
            <dl class="facts">
              <dt>Amount</dt>
              <dd>{money(found.row.amount_cents, found.row.currency)}</dd>
              <dt>Buyer</dt>
              <dd>
                <Party id={found.row.buyer_id} party={found.names.get(found.row.buyer_id)} />
              </dd>
              <dt>Supplier</dt>
              <dd>
                <Party id={found.row.supplier_id} party={found.names.get(found.row.supplier_id)} />
              </dd>
              <dt>Payment</dt>
              <dd>
                {found.payment ? (
                  <>
                    <a href={`#/payments/${encodeURIComponent(found.payment.id)}`} class="mono small">
                      {found.payment.id}
                    </a>{" "}
                    <Badge value={found.payment.status} />
                  </>
                ) : (
                  <span class="muted">None covers it (a canceled or failed one lets go of it).</span>
                )}
              </dd>
              <dt>Created / updated</dt>
              <dd>
                {when(found.row.created)} / {when(found.row.updated)}
              </dd>
            </dl>
          </Card>
        </>
      )}
    </RecordPage>
  );
}
