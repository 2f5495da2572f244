import { api, apiPath, withQuery, type Page } from "../api";
import { when } from "../format";
import { useLoad } from "../parts/load";
import { PaymentTable } from "../parts/payment-table";
import { Badge, Card, Empty, Loading, Problem, RecordPage } from "../parts/ui";
import { href } from "../router";
import type { Counterparty, Payment } from "./types";

/** A buyer or supplier, and its latest payments (from a buyer, to a supplier). */
export function CounterpartyPage({ id }: { id: string }) {
  const party = useLoad(() => api<Counterparty>("GET", apiPath`/v1/counterparties/${id}/`), id);
  const row = party.data;
  const side = row?.type === "buyer" ? "originating_counterparty_id" : "receiving_counterparty_id";
  const payments = useLoad(
    async () => (row ? api<Page<Payment>>("GET", withQuery("/v2/payments/", { [side]: row.id, ordering: "updated", page_size: "25" })) : null),
    `${row?.id} ${side}`,
  );
  return (
    <RecordPage section="Counterparties" path="/counterparties" noun="counterparty" loaded={party}>
      {(row) => (
        <>
          <div class="page-head">
            <div>
              <h1 tabIndex={-1}>{row.name}</h1>
              <div class="badges">
                <Badge value={row.type} />
                <span class="mono small muted">{row.id}</span>
              </div>
            </div>
          </div>
          <Card>
            <dl class="facts">
              <dt>Internal id</dt>
              <dd class="mono">{row.internal_id}</dd>
              <dt>Created / updated</dt>
              <dd>
                {when(row.created)} / {when(row.updated)}
              </dd>
            </dl>
          </Card>
          <Card title={row.type === "buyer" ? "Payments from this buyer" : "Payments to this supplier"} id="payments">
            <Problem error={payments.error} />
            {payments.loading && !payments.data && <Loading what="payments" />}
            {payments.data && payments.data.results.length === 0 && <Empty>No payments yet.</Empty>}
            {payments.data && payments.data.results.length > 0 && (
              <>
                <PaymentTable payments={payments.data.results} />
                <p class="muted small">
                  {payments.data.count.toLocaleString()} in all, the first 25 by last change.{" "}
                  <a href={href("/payments", { [side]: row.id })}>See them in Payments</a>
                </p>
              </>
            )}
          </Card>
        </>
      )}
    </RecordPage>
  );
}
