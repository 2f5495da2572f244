import { useState } from "preact/hooks";
import { api, apiPath } from "../api";
import { ago, duration, localToIso, percent, when } from "../format";
import { AttemptsChart, LagChart } from "../parts/chart";
import { Deliveries } from "../parts/deliveries";
import { ReplayCard } from "../parts/replays";
import { useAction, useLoad } from "../parts/load";
import { changes, FLAGS, SubscriptionForm, type SubscriptionFields } from "../parts/subscription-form";
import { Badge, Card, Loading, Problem, Stat } from "../parts/ui";
import { go, href } from "../router";
import type { Delivery, Stats, Subscription } from "./types";

const fieldsOf = (row: Subscription): SubscriptionFields => ({
  event: row.event,
  filters: row.filters ? JSON.stringify(row.filters) : "",
  description: row.description ?? "",
  url: row.url,
  content_type: row.content_type,
  signing: row.signing,
  username: row.username ?? "",
  password: row.password ?? "",
  flags: Object.fromEntries(FLAGS.map(([name]) => [name, row[name]])) as SubscriptionFields["flags"],
});

/** One subscription: its health, its settings and actions, its delivery log and recovery. */
export function SubscriptionPage({ id, query }: { id: string; query: URLSearchParams }) {
  const [window, setWindow] = useState("24h");
  const [editing, setEditing] = useState(false);
  const [notice, setNotice] = useState(query.get("created") ? "Subscription created. Its signing secret is below." : "");
  const subscription = useLoad(() => api<Subscription>("GET", apiPath`/v1/webhooks/${id}/`), id);
  const stats = useLoad(() => api<Stats>("GET", apiPath`/v1/webhooks/${id}/stats/?window=${window}`), `${id} ${window}`);
  const action = useAction();
  const [logRound, setLogRound] = useState(0);

  const row = subscription.data;
  const act = async (what: () => Promise<unknown>, message: string) => {
    const done = await action.run(what);
    if (done !== undefined) {
      setNotice(message);
      subscription.reload();
      stats.reload();
      setLogRound((n) => n + 1);
    }
  };

  return (
    <div class="page">
      <p class="crumbs">
        <a href={href("/")}>Webhooks</a> / subscription
      </p>
      <Problem error={subscription.error} />
      {!row && subscription.loading && <Loading what="the subscription" />}
      {row && (
        <>
          <div class="page-head">
            <div>
              <h1 tabIndex={-1} class="break">
                {row.description ?? row.url}
              </h1>
              {row.description && <p class="muted break mono small">{row.url}</p>}
              <div class="badges">
                {row.is_active ? <Badge value="active" /> : <Badge value="paused" />}
                {row.event === "subscription.health" && <Badge value="info" label="health events" />}
                {stats.data?.failing_since && <Badge value="failed" label={`failing since ${when(stats.data.failing_since)}`} />}
                {stats.data?.backoff_until && <Badge value="pending" label={`backed off until ${when(stats.data.backoff_until)}`} />}
                {stats.data && stats.data.held > 0 && <Badge value="held" label={`${stats.data.held.toLocaleString()} held`} />}
                {!row.secrets_readable && <Badge value="failed" label="secrets unreadable" />}
                {row.verification === "pending" && <Badge value="pending" label="receiver not verified yet: deliveries held" />}
                {row.verification === "failed" && <Badge value="failed" label="receiver verification failed" />}
                {row.verification === "verified" && <Badge value="active" label="receiver verified" />}
                <span class="muted small mono">{row.id}</span>
              </div>
            </div>
            <div class="actions">
              <button
                type="button"
                disabled={action.busy || !row.is_active}
                onClick={() => act(() => api<Delivery>("POST", apiPath`/v1/webhooks/${id}/test/`), "Test delivery sent. It is at the top of the log below.")}
              >
                Send test delivery
              </button>
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                onClick={() =>
                  act(
                    () => api("PATCH", apiPath`/v1/webhooks/${id}/`, { is_active: !row.is_active }),
                    row.is_active ? "Paused: no deliveries are sent until you resume." : "Resumed.",
                  )
                }
              >
                {row.is_active ? "Pause" : "Resume"}
              </button>
              <button type="button" class="secondary" disabled={action.busy} onClick={() => setEditing(true)}>
                Edit
              </button>
              {(row.verification === "pending" || row.verification === "failed") && (
                <button
                  type="button"
                  class="secondary"
                  disabled={action.busy}
                  onClick={() =>
                    act(
                      () => api("POST", apiPath`/v1/webhooks/${id}/verify/`),
                      "Challenge sent. Once the receiver answers it, the held deliveries go out in order.",
                    )
                  }
                >
                  Verify receiver
                </button>
              )}
              {!row.is_active && (stats.data?.held ?? 0) > 0 && (
                <button
                  type="button"
                  class="secondary"
                  disabled={action.busy}
                  onClick={() =>
                    confirm("Drop the deliveries this subscription holds? They will never be sent; resume instead to send them.") &&
                    act(() => api("POST", apiPath`/v1/webhooks/${id}/held/discard/`), "Held deliveries discarded.")
                  }
                >
                  Discard held
                </button>
              )}
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                onClick={() =>
                  confirm("Rotate the signing secret? For 24 hours deliveries are signed with both the old and the new one.") &&
                  act(() => api("POST", apiPath`/v1/webhooks/${id}/rotate-secret/`), "Secret rotated. Deliveries carry both signatures for 24 hours.")
                }
              >
                Rotate secret
              </button>
              <button
                type="button"
                class="danger"
                disabled={action.busy}
                onClick={async () => {
                  if (!confirm("Delete this subscription and its delivery log? Pending deliveries are dropped.")) return;
                  if ((await action.run(() => api("DELETE", apiPath`/v1/webhooks/${id}/`))) !== undefined) go("/");
                }}
              >
                Delete
              </button>
            </div>
          </div>
          {notice && (
            <p class="notice" role="status">
              {notice}
            </p>
          )}
          <Problem error={action.error} />
          {editing && (
            <EditCard
              row={row}
              onDone={(saved) => {
                setEditing(false);
                if (saved) {
                  setNotice("Saved.");
                  subscription.reload();
                }
              }}
            />
          )}
          <Card
            title="Health"
            id="health"
            actions={
              <div class="segmented" role="group" aria-label="Window">
                {["1h", "24h", "7d"].map((choice) => (
                  <button type="button" aria-pressed={window === choice} class={window === choice ? "on" : ""} onClick={() => setWindow(choice)}>
                    {choice}
                  </button>
                ))}
              </div>
            }
          >
            <Problem error={stats.error} />
            {stats.data && (
              <>
                <div class="stats">
                  <Stat label="success rate" value={percent(stats.data.success_rate)} />
                  <Stat
                    label="attempts"
                    value={stats.data.attempts.toLocaleString()}
                    hint={`${stats.data.succeeded} ok · ${stats.data.pending} retried · ${stats.data.failed} failed`}
                  />
                  <Stat label="p50 / p95" value={`${duration(stats.data.p50_duration_ms)} / ${duration(stats.data.p95_duration_ms)}`} />
                  <Stat
                    label="lag p50 / p95"
                    value={`${duration(stats.data.p50_lag_ms)} / ${duration(stats.data.p95_lag_ms)}`}
                    hint={stats.data.waiting_for_order > 0 ? `${stats.data.waiting_for_order.toLocaleString()} waiting for order` : undefined}
                  />
                  <Stat
                    label="last success"
                    value={ago(stats.data.last_success_at)}
                    hint={stats.data.last_attempt_at ? `last attempt ${ago(stats.data.last_attempt_at)}` : undefined}
                  />
                  <Stat label="in flight" value={stats.data.in_flight.toLocaleString()} hint={`${stats.data.held.toLocaleString()} held`} />
                </div>
                <AttemptsChart points={stats.data.series} label={`Attempts over the last ${stats.data.window}`} />
                <LagChart points={stats.data.series} label={`p95 lag over the last ${stats.data.window}`} />
              </>
            )}
          </Card>
          <Card title="Settings" id="settings">
            <dl class="facts">
              <dt>Signing secret</dt>
              <dd>
                <Secret value={row.secret} label="signing secret" />
              </dd>
              <dt>Signing</dt>
              <dd>
                {row.signing === "ed25519" ? (
                  <>
                    Ed25519 (<span class="mono">v1a</span>); public key <span class="mono">{row.public_key}</span>
                  </>
                ) : (
                  <>
                    HMAC (<span class="mono">v1</span>) with the signing secret
                  </>
                )}
              </dd>
              <dt>Receiver credentials</dt>
              <dd class="mono">
                {row.username ?? "—"} / <Secret value={row.password} label="receiver password" />
              </dd>
              <dt>Content type</dt>
              <dd>{row.content_type}</dd>
              <dt>Receives</dt>
              <dd>{row.event}</dd>
              <dt>Carries</dt>
              <dd>
                {FLAGS.filter(([name]) => row[name])
                  .map(([, label]) => label)
                  .join(", ") || "the payment's id only"}
              </dd>
              <dt>Filters</dt>
              <dd class="mono small break">{row.filters ? describeFilters(row.filters) : "none: every change"}</dd>
              <dt>Created</dt>
              <dd>
                {when(row.created_at)} by {row.user}
              </dd>
            </dl>
          </Card>
          <Deliveries subscriptionId={id} query={query} round={logRound} />
          <RecoverCard id={id} onRecovered={() => setLogRound((n) => n + 1)} />
          <ReplayCard id={id} />
        </>
      )}
    </div>
  );
}

/** A subscription's filters in words: each key with its values (OR), the keys joined by "and". */
function describeFilters(filters: NonNullable<Subscription["filters"]>): string {
  return Object.entries(filters)
    .map(([key, value]) => `${key} ${Array.isArray(value) ? `in ${value.join(", ")}` : `= ${value}`}`)
    .join(" and ");
}

function Secret({ value, label }: { value: string | null; label: string }) {
  const [shown, setShown] = useState(false);
  if (value === null) return <span class="muted">unreadable</span>;
  return (
    <span class="secret">
      <code>{shown ? value : "•".repeat(Math.min(24, value.length))}</code>
      <button type="button" class="link" onClick={() => setShown(!shown)} aria-label={`${shown ? "Hide" : "Show"} ${label}`}>
        {shown ? "hide" : "show"}
      </button>
      {shown && navigator.clipboard && (
        <button type="button" class="link" onClick={() => navigator.clipboard.writeText(value)} aria-label={`Copy ${label}`}>
          copy
        </button>
      )}
    </span>
  );
}

function EditCard({ row, onDone }: { row: Subscription; onDone: (saved: boolean) => void }) {
  const save = useAction();
  const before = fieldsOf(row);
  return (
    <Card title="Edit subscription" id="edit">
      <SubscriptionForm
        initial={before}
        editing
        submitLabel="Save changes"
        busy={save.busy}
        error={save.error}
        onCancel={() => onDone(false)}
        onSubmit={async (values) => {
          const patch = changes(values, before);
          if (Object.keys(patch).length === 0) return onDone(false);
          if ((await save.run(() => api("PATCH", apiPath`/v1/webhooks/${row.id}/`, patch))) !== undefined) onDone(true);
        }}
      />
    </Card>
  );
}

function RecoverCard({ id, onRecovered }: { id: string; onRecovered: () => void }) {
  const dayAgo = new Date(Date.now() - 86_400_000 - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  const [since, setSince] = useState(dayAgo);
  const [until, setUntil] = useState("");
  const [result, setResult] = useState<string>("");
  const recover = useAction();
  return (
    <Card title="Recover failed deliveries" id="recover">
      <p class="muted">
        Every failed delivery created in the window goes back to pending and is sent again with the same id and body. The window spans at most 14 days; leave
        Until empty for now.
      </p>
      <form
        class="form row-form"
        onSubmit={async (event) => {
          event.preventDefault();
          setResult("");
          const body = { since: localToIso(since) ?? since, ...(until ? { until: localToIso(until) ?? until } : {}) };
          const answer = await recover.run(() => api<{ recovered: number }>("POST", apiPath`/v1/webhooks/${id}/recover/`, body));
          if (answer) {
            setResult(
              answer.recovered === 0
                ? "No failed deliveries in that window."
                : `${answer.recovered.toLocaleString()} ${answer.recovered === 1 ? "delivery" : "deliveries"} recovered and queued.`,
            );
            onRecovered();
          }
        }}
      >
        <label>
          Since
          <input type="datetime-local" name="since" required value={since} onInput={(event) => setSince(event.currentTarget.value)} />
        </label>
        <label>
          Until
          <input type="datetime-local" name="until" value={until} onInput={(event) => setUntil(event.currentTarget.value)} />
        </label>
        <button type="submit" disabled={recover.busy}>
          {recover.busy ? "Recovering…" : "Recover"}
        </button>
      </form>
      <Problem error={recover.error} title="Not recovered:" />
      {result && (
        <p class="notice" role="status">
          {result}
        </p>
      )}
    </Card>
  );
}
