import { api, apiPath } from "../api";
import { duration, formFields, pretty, when } from "../format";
import { useAction, useLoad } from "../parts/load";
import { Badge, Card, Loading, Problem } from "../parts/ui";
import { href } from "../router";
import type { Attempt, Delivery } from "./types";

/** One delivery: its attempts as a timeline, the headers and body it sent, and redelivery. */
export function DeliveryPage({ subscriptionId, deliveryId }: { subscriptionId: string; deliveryId: string }) {
  const delivery = useLoad(() => api<Delivery>("GET", apiPath`/v1/webhooks/${subscriptionId}/deliveries/${deliveryId}/`), deliveryId);
  const redeliver = useAction();
  const row = delivery.data;
  return (
    <div class="page">
      <p class="crumbs">
        <a href={href("/")}>Webhooks</a> / <a href={href(`/subscriptions/${subscriptionId}`)}>subscription</a> / delivery
      </p>
      <Problem error={delivery.error} />
      {!row && delivery.loading && <Loading what="the delivery" />}
      {row && (
        <>
          <div class="page-head">
            <div>
              <h1 tabIndex={-1}>Delivery</h1>
              <div class="badges">
                <Badge value={row.status} />
                {row.test && <Badge value="test" />}
                <span class="mono small muted">{row.id}</span>
              </div>
            </div>
            <div class="actions">
              <button type="button" class="secondary" onClick={delivery.reload}>
                Refresh
              </button>
              <button
                type="button"
                disabled={redeliver.busy}
                onClick={async () => {
                  if ((await redeliver.run(() => api("POST", apiPath`/v1/webhooks/${subscriptionId}/deliveries/${deliveryId}/redeliver/`))) !== undefined)
                    delivery.reload();
                }}
              >
                {redeliver.busy ? "Queuing…" : "Redeliver"}
              </button>
            </div>
          </div>
          <Problem error={redeliver.error} title="Not redelivered:" />
          <Card>
            <dl class="facts">
              <dt>Payment</dt>
              <dd class="mono">
                {row.payment_id === "pmt_test" ? "pmt_test (example payment)" : <a href={href(`/payments/${row.payment_id}`)}>{row.payment_id}</a>}
              </dd>
              {row.event_id && (
                <>
                  <dt>Event</dt>
                  <dd class="mono">{row.event_id}</dd>
                </>
              )}
              <dt>Created</dt>
              <dd>{when(row.created)}</dd>
              <dt>Next attempt</dt>
              <dd>{row.next_attempt_at ? when(row.next_attempt_at) : "none: the delivery has ended"}</dd>
            </dl>
          </Card>
          <Card title={`Attempts (${row.attempts.length})`} id="attempts">
            {row.attempts.length === 0 ? (
              <p class="muted">No attempt yet{row.status === "pending" ? ": it is queued." : "."}</p>
            ) : (
              <Timeline attempts={row.attempts} />
            )}
          </Card>
          <Card title="Headers sent" id="headers">
            {row.headers ? (
              <div class="table-wrap">
                <table class="kv">
                  <tbody>
                    {Object.entries(row.headers).map(([name, value]) => (
                      <tr>
                        <th scope="row" class="mono">
                          {name}
                        </th>
                        <td class="mono break">{value}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : (
              <p class="muted">Shown once an attempt has been recorded.</p>
            )}
          </Card>
          <Body body={row.body} contentType={row.headers?.["content-type"]} />
        </>
      )}
    </div>
  );
}

/** The body as sent; a form body also field by field, decoded. */
function Body({ body, contentType }: { body: string; contentType: string | undefined }) {
  const fields = formFields(body, contentType);
  if (!fields) {
    return (
      <Card title="Body" id="body">
        <pre class="code">{pretty(body)}</pre>
      </Card>
    );
  }
  return (
    <Card title="Body (form fields, decoded)" id="body">
      <div class="table-wrap">
        <table class="kv">
          <tbody>
            {fields.map(([name, value]) => (
              <tr>
                <th scope="row" class="mono">
                  {name}
                </th>
                <td class="mono break">
                  {value.includes("\n") ? <pre class="code small">{value}</pre> : value === "" ? <span class="muted">(empty: null)</span> : value}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <details>
        <summary>As sent</summary>
        <pre class="code small">{body}</pre>
      </details>
    </Card>
  );
}

function Timeline({ attempts }: { attempts: Attempt[] }) {
  return (
    <ol class="timeline">
      {attempts.map((attempt) => {
        const ok = attempt.response_status !== null && attempt.response_status >= 200 && attempt.response_status < 300;
        const running = attempt.duration_ms === null;
        return (
          <li class={ok ? "good" : running ? "wait" : "bad"}>
            <div class="when">
              <strong>Attempt {attempt.number}</strong> · {when(attempt.started_at)}
            </div>
            <div>
              {attempt.response_status !== null ? <span class="mono">HTTP {attempt.response_status}</span> : <span class="muted">no answer</span>}
              {" · "}
              {duration(attempt.duration_ms)}
            </div>
            {attempt.error && <div class="attempt-error">{attempt.error}</div>}
            {attempt.response_excerpt && (
              <details>
                <summary>Response</summary>
                <pre class="code small">{attempt.response_excerpt}</pre>
              </details>
            )}
          </li>
        );
      })}
    </ol>
  );
}
