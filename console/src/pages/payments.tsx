import { useEffect, useState } from "preact/hooks";
import { api, localPath, withQuery, type Page } from "../api";
import { localToIso } from "../format";
import { useLoad } from "../parts/load";
import { PaymentTable } from "../parts/payment-table";
import { Card, Listed } from "../parts/ui";
import { go } from "../router";
import type { Payment } from "./types";

const STATUSES = ["pending", "in-progress", "settled", "canceled", "failed", "refunded"] as const;

/** Payments with the polling filters (status, updated after, ordering), paged by the API's links. */
export function Payments({ query }: { query: URLSearchParams }) {
  const status = query.getAll("status");
  const updatedAfter = query.get("updated_after") ?? "";
  const ordering = query.get("ordering") ?? "";
  // From a counterparty's page: only its payments.
  const parties = {
    originating_counterparty_id: query.get("originating_counterparty_id") ?? undefined,
    receiving_counterparty_id: query.get("receiving_counterparty_id") ?? undefined,
  };
  const first = withQuery("/v2/payments/", { page_size: "25", status, updated__gt: localToIso(updatedAfter), ordering, ...parties });
  const [path, setPath] = useState(first);
  useEffect(() => setPath(first), [first]);
  const list = useLoad(() => api<Page<Payment>>("GET", path), path);
  const [draft, setDraft] = useState({ status, updatedAfter, ordering });
  useEffect(() => setDraft({ status, updatedAfter, ordering }), [query.toString()]);
  const apply = (event: Event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const value of draft.status) params.append("status", value);
    if (draft.updatedAfter) params.set("updated_after", draft.updatedAfter);
    if (draft.ordering) params.set("ordering", draft.ordering);
    for (const [name, value] of Object.entries(parties)) if (value) params.set(name, value);
    location.hash = `#/payments${params.size ? `?${params}` : ""}`;
  };

  return (
    <div class="page">
      <div class="page-head">
        <h1 tabIndex={-1}>Payments</h1>
      </div>
      <p class="muted">
        To stay in sync, poll with <code>ordering=updated</code> and <code>updated__gt</code> set to the last <code>updated</code> you saw.
      </p>
      <Card>
        <form class="filters" aria-label="Filter payments" onSubmit={apply}>
          <fieldset class="inline">
            <legend>Status</legend>
            {STATUSES.map((value) => (
              <label class="check">
                <input
                  type="checkbox"
                  name="status"
                  value={value}
                  checked={draft.status.includes(value)}
                  onChange={(event) =>
                    setDraft({ ...draft, status: event.currentTarget.checked ? [...draft.status, value] : draft.status.filter((item) => item !== value) })
                  }
                />
                {value}
              </label>
            ))}
          </fieldset>
          <label>
            Updated after
            <input
              type="datetime-local"
              step="1"
              name="updated_after"
              value={draft.updatedAfter}
              onInput={(event) => setDraft({ ...draft, updatedAfter: event.currentTarget.value })}
            />
          </label>
          <label>
            Order by
            <select name="ordering" value={draft.ordering} onChange={(event) => setDraft({ ...draft, ordering: event.currentTarget.value })}>
              <option value="">created</option>
              <option value="updated">updated</option>
            </select>
          </label>
          <button type="submit" class="secondary">
            Apply
          </button>
          {(status.length > 0 || updatedAfter || ordering || parties.originating_counterparty_id || parties.receiving_counterparty_id) && (
            <button type="button" class="link" onClick={() => go("/payments")}>
              Clear
            </button>
          )}
        </form>
        <Listed
          error={list.error}
          loading={list.loading}
          page={list.data}
          noun="payments"
          one="payment"
          empty="No payments match."
          onPage={(link) => setPath(localPath(link))}
        >
          {(rows) => <PaymentTable payments={rows} />}
        </Listed>
      </Card>
    </div>
  );
}
