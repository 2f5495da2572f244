import { api, apiPath, type Page, withQuery } from "../api";
import { money, when } from "../format";
import { useLoad } from "../parts/load";
import { counterparties } from "../parts/names";
import { Badge, Card, Party, Problem, RecordPage } from "../parts/ui";
import { href } from "../router";
import type { Delivery, Payment, Subscription } from "./types";

interface Made {
  subscription: Subscription;
  delivery: Delivery;
}

/** Every delivery the payment's changes made, for each subscription, by the event that made it. */
async function deliveriesOf(paymentId: string): Promise<Map<string, Made[]>> {
  const subscriptions = await api<Page<Subscription>>("GET", "/v1/webhooks/?page_size=100");
  const byEvent = new Map<string, Made[]>();
  await Promise.all(
    subscriptions.results.map(async (subscription) => {
      const log = await api<Page<Delivery>>(
        "GET",
        withQuery(apiPath`/v1/webhooks/${subscription.id}/deliveries/`, { payment_id: paymentId, page_size: "1000" }),
      );
      for (const delivery of log.results) {
        const key = delivery.event_id ?? "unknown";
        byEvent.set(key, [...(byEvent.get(key) ?? []), { subscription, delivery }]);
      }
    }),
  );
  return byEvent;
}

/** A payment and its timeline: each event, and the deliveries its change made. */
export function PaymentPage({ id }: { id: string }) {
  const payment = useLoad(() => api<Payment>("GET", apiPath`/v2/payments/${id}/`), id);
  const names = useLoad(
    async () => (payment.data ? counterparties([payment.data.originating_counterparty_id, payment.data.receiving_counterparty_id]) : null),
    payment.data?.id ?? "",
  );
  const made = useLoad(() => deliveriesOf(id), id);
  return (
    <RecordPage section="Payments" path="/payments" noun="payment" loaded={payment}>
      {(row) => (
        <>
          <div class="page-head">
            <div>
              <h1 tabIndex={-1}>{money(row.amount_cents, row.currency)}</h1>
              <div class="badges">
                <Badge value={row.status} />
                <span class="mono small muted">{row.id}</span>
              </div>
            </div>
          </div>
          <Card>
            <dl class="facts">
              <dt>From (buyer)</dt>
              <dd>
                <Party id={row.originating_counterparty_id} party={names.data?.get(row.originating_counterparty_id)} />
              </dd>
              <dt>To (supplier)</dt>
              <dd>
                <Party id={row.receiving_counterparty_id} party={names.data?.get(row.receiving_counterparty_id)} />
              </dd>
              <dt>Method</dt>
              <dd>
                {row.payment_method}
                {row.instrument_number && <span class="mono"> · {row.instrument_number}</span>}
              </dd>
              <dt>Invoices</dt>
              <dd>
                {row.invoices.map((invoice, i) => (
                  <>
                    {i > 0 && ", "}
                    <a href={href(`/invoices/${invoice.id}`)}>{invoice.invoice_number}</a> ({money(invoice.amount_cents, row.currency)})
                  </>
                ))}
              </dd>
              {row.refund_reason && (
                <>
                  <dt>Refund reason</dt>
                  <dd>{row.refund_reason}</dd>
                </>
              )}
              <dt>Created / updated</dt>
              <dd>
                {when(row.created)} / {when(row.updated)}
              </dd>
            </dl>
          </Card>
          <Card title="Timeline" id="timeline">
            <Problem error={made.error} title="The deliveries could not be read:" />
            <ol class="timeline">
              {row.events.map((event) => (
                <li class={event.status === "failed" || event.status === "canceled" ? "bad" : event.status === "settled" ? "good" : "wait"}>
                  <div class="when">
                    <strong>
                      <span class="mono">{event.event_code}</span> {event.description}
                    </strong>
                  </div>
                  <div class="muted small">
                    {when(event.created)} · status <Badge value={event.status} />
                  </div>
                  <ul class="made">
                    {made.loading && !made.data && <li class="muted small">Loading deliveries…</li>}
                    {made.data &&
                      (made.data.get(event.id) ?? []).map(({ subscription, delivery }) => (
                        <li>
                          <Badge value={delivery.status} />{" "}
                          <a href={href(`/subscriptions/${subscription.id}/deliveries/${delivery.id}`)} class="break">
                            {subscription.description ?? subscription.url}
                          </a>{" "}
                          <span class="muted small">
                            {delivery.attempts.length} attempt{delivery.attempts.length === 1 ? "" : "s"}
                          </span>
                        </li>
                      ))}
                    {made.data && !(made.data.get(event.id) ?? []).length && <li class="muted small">No delivery: no active subscription at the time.</li>}
                  </ul>
                </li>
              ))}
            </ol>
          </Card>
        </>
      )}
    </RecordPage>
  );
}
