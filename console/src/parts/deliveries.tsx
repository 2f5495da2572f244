import { useEffect, useState } from "preact/hooks";
import { api, apiPath, localPath, type Page, withQuery } from "../api";
import { ago, localToIso, when } from "../format";
import { useLoad } from "./load";
import { Badge, Card, Listed } from "./ui";
import { go, href } from "../router";
import type { Delivery } from "../pages/types";

const STATUSES = ["pending", "succeeded", "failed", "held"] as const;

/**
 * A subscription's delivery log, newest first, filtered by status and created time (kept in the
 * address, so back and forward work), paged by the API's own links.
 */
export function Deliveries({ subscriptionId, query, round }: { subscriptionId: string; query: URLSearchParams; round: number }) {
  const status = query.get("status") ?? "";
  const from = query.get("from") ?? "";
  const to = query.get("to") ?? "";
  const first = withQuery(apiPath`/v1/webhooks/${subscriptionId}/deliveries/`, {
    page_size: "25",
    status,
    created__gte: localToIso(from),
    created__lte: localToIso(to),
  });
  const [path, setPath] = useState(first);
  useEffect(() => setPath(first), [first]);
  const log = useLoad(() => api<Page<Delivery>>("GET", path), `${path} ${round}`);
  const [draft, setDraft] = useState({ status, from, to });
  useEffect(() => setDraft({ status, from, to }), [status, from, to]);

  return (
    <Card
      title="Delivery log"
      id="log"
      actions={
        <button type="button" class="secondary small" onClick={log.reload}>
          Refresh
        </button>
      }
    >
      <form
        class="filters"
        aria-label="Filter deliveries"
        onSubmit={(event) => {
          event.preventDefault();
          go(`/subscriptions/${subscriptionId}`, { status: draft.status || undefined, from: draft.from || undefined, to: draft.to || undefined });
        }}
      >
        <label>
          Status
          <select name="status" value={draft.status} onChange={(event) => setDraft({ ...draft, status: event.currentTarget.value })}>
            <option value="">Any</option>
            {STATUSES.map((value) => (
              <option value={value}>{value}</option>
            ))}
          </select>
        </label>
        <label>
          Created from
          <input type="datetime-local" name="from" value={draft.from} onInput={(event) => setDraft({ ...draft, from: event.currentTarget.value })} />
        </label>
        <label>
          Created to
          <input type="datetime-local" name="to" value={draft.to} onInput={(event) => setDraft({ ...draft, to: event.currentTarget.value })} />
        </label>
        <button type="submit" class="secondary">
          Apply
        </button>
      </form>
      <Listed
        error={log.error}
        loading={log.loading}
        page={log.data}
        noun="deliveries"
        one="delivery"
        empty="No deliveries match."
        onPage={(link) => setPath(localPath(link))}
      >
        {(rows) => (
          <div class="table-wrap">
            <table class="stack">
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">Seq.</th>
                  <th scope="col">Status</th>
                  <th scope="col">Payment</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last answer</th>
                  <th scope="col">Next attempt</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((row) => {
                  const last = row.attempts.at(-1);
                  return (
                    <tr key={row.id}>
                      <td data-label="Created">
                        <a href={href(`/subscriptions/${subscriptionId}/deliveries/${row.id}`)}>{when(row.created)}</a>
                      </td>
                      <td data-label="Seq." class="mono small">
                        {row.sequence ?? "—"}
                      </td>
                      <td data-label="Status">
                        <Badge value={row.status} /> {row.test && <Badge value="test" />}
                      </td>
                      <td data-label="Payment" class="mono small">
                        {row.payment_id === "" ? (
                          <Badge value="info" label={row.event} />
                        ) : row.payment_id.startsWith("pmt_test") ? (
                          row.payment_id
                        ) : (
                          <a href={href(`/payments/${row.payment_id}`)}>{row.payment_id}</a>
                        )}
                      </td>
                      <td data-label="Attempts">{row.attempts.length}</td>
                      <td data-label="Last answer" class="break">
                        {last ? (last.response_status ?? last.error ?? "—") : "—"}
                      </td>
                      <td data-label="Next attempt">{row.next_attempt_at ? ago(row.next_attempt_at) : "—"}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </Listed>
    </Card>
  );
}
