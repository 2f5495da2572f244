import { useState } from "preact/hooks";
import { api, apiPath, localPath, type Page } from "../api";
import { ago, percent } from "../format";
import { useAction, useLoad } from "../parts/load";
import { BLANK, changes, SubscriptionForm } from "../parts/subscription-form";
import { Badge, Card, Listed } from "../parts/ui";
import { go, href } from "../router";
import type { Stats, Subscription } from "./types";

/** The account's subscriptions with their health over 24 hours, and a form for a new one. */
export function Subscriptions() {
  const [path, setPath] = useState("/v1/webhooks/?page_size=20");
  const [creating, setCreating] = useState(false);
  const list = useLoad(async () => {
    const page = await api<Page<Subscription>>("GET", path);
    const stats = await Promise.all(page.results.map((row) => api<Stats>("GET", apiPath`/v1/webhooks/${row.id}/stats/?window=24h`).catch(() => null)));
    return { page, stats };
  }, path);
  const create = useAction();
  return (
    <div class="page">
      <div class="page-head">
        <h1 tabIndex={-1}>Webhooks</h1>
        {!creating && (
          <button type="button" onClick={() => setCreating(true)}>
            New subscription
          </button>
        )}
      </div>
      <p class="muted">
        Each subscription receives a signed <code>payment.changed</code> delivery whenever a payment of the account changes.
      </p>
      {creating && (
        <Card title="New subscription" id="new-subscription">
          <SubscriptionForm
            initial={BLANK}
            submitLabel="Create subscription"
            busy={create.busy}
            error={create.error}
            onCancel={() => (create.clear(), setCreating(false))}
            onSubmit={async (values) => {
              const made = await create.run(() => api<Subscription>("POST", "/v1/webhooks/", changes(values)));
              if (made) go(`/subscriptions/${made.id}`, { created: "1" });
            }}
          />
        </Card>
      )}
      <Card>
        <Listed
          error={list.error}
          loading={list.loading}
          page={list.data?.page}
          noun="subscriptions"
          one="subscription"
          empty="No subscriptions yet. Create one to start receiving payment changes."
          onPage={(link) => setPath(localPath(link))}
        >
          {(rows) => (
            <div class="table-wrap">
              <table class="stack">
                <thead>
                  <tr>
                    <th scope="col">Endpoint</th>
                    <th scope="col">State</th>
                    <th scope="col">Success (24 h)</th>
                    <th scope="col">Attempts (24 h)</th>
                    <th scope="col">Last success</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((row, i) => {
                    const stats = list.data!.stats[i];
                    return (
                      <tr key={row.id}>
                        <td data-label="Endpoint">
                          <a href={href(`/subscriptions/${row.id}`)} class="strong break">
                            {row.description ?? row.url}
                          </a>
                          {row.description && <div class="small break">{row.url}</div>}
                          <div class="muted small mono">{row.id}</div>
                        </td>
                        <td data-label="State">
                          {row.is_active ? (
                            stats?.failing_since ? (
                              <Badge value="failed" label="failing" />
                            ) : (
                              <Badge value="active" />
                            )
                          ) : (
                            <Badge value="paused" />
                          )}
                          {!row.secrets_readable && <Badge value="failed" label="secrets unreadable" />}
                        </td>
                        <td data-label="Success (24 h)">{stats ? percent(stats.success_rate) : "—"}</td>
                        <td data-label="Attempts (24 h)">{stats ? stats.attempts.toLocaleString() : "—"}</td>
                        <td data-label="Last success">{stats ? ago(stats.last_success_at) : "—"}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
        </Listed>
      </Card>
    </div>
  );
}
