import { useEffect, useState } from "preact/hooks";
import { api, apiPath, type Page } from "../api";
import { localToIso, when } from "../format";
import type { Replay } from "../pages/types";
import { useAction, useLoad } from "./load";
import { Badge, Card, Problem } from "./ui";

/** How often the list is read again while a replay runs. */
const REFRESH_MS = 2000;

/**
 * A subscription's replays (docs/interface.md, "Replay"): count a window first (a dry run), then
 * replay it; each replay's progress, read again while one runs, and its cancel.
 */
export function ReplayCard({ id }: { id: string }) {
  const monthAgo = new Date(Date.now() - 30 * 86_400_000 - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  const [since, setSince] = useState(monthAgo);
  const [until, setUntil] = useState("");
  const [counted, setCounted] = useState<number | null>(null);
  const [round, setRound] = useState(0);
  const replays = useLoad(() => api<Page<Replay>>("GET", apiPath`/v1/webhooks/${id}/replays/?page_size=10`), `${id} ${round}`);
  const action = useAction();
  const running = replays.data?.results.some((replay) => replay.status === "running") ?? false;
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(() => setRound((n) => n + 1), REFRESH_MS);
    return () => clearTimeout(timer);
  }, [running, round]);

  const body = (dryRun: boolean) => ({ since: localToIso(since) ?? since, ...(until ? { until: localToIso(until) ?? until } : {}), dry_run: dryRun });
  return (
    <Card title="Replay a window" id="replay">
      <p class="muted">
        Sends again every delivery made in the window, from the log and from the archive alike: each once, in sequence order, as it was, with a{" "}
        <code>hook-replay</code> header. Count it first; the window spans at most 400 days; leave Until empty for now.
      </p>
      <form
        class="form row-form"
        onSubmit={async (event) => {
          event.preventDefault();
          const answer = await action.run(() => api<{ count: number }>("POST", apiPath`/v1/webhooks/${id}/replay/`, body(true)));
          if (answer) setCounted(answer.count);
        }}
      >
        <label>
          Since
          <input
            type="datetime-local"
            name="replay-since"
            required
            value={since}
            onInput={(event) => (setSince(event.currentTarget.value), setCounted(null))}
          />
        </label>
        <label>
          Until
          <input type="datetime-local" name="replay-until" value={until} onInput={(event) => (setUntil(event.currentTarget.value), setCounted(null))} />
        </label>
        <button type="submit" class="secondary" disabled={action.busy}>
          Count
        </button>
        {counted !== null && (
          <button
            type="button"
            disabled={action.busy || counted === 0}
            onClick={async () => {
              if ((await action.run(() => api<Replay>("POST", apiPath`/v1/webhooks/${id}/replay/`, body(false)))) !== undefined) {
                setCounted(null);
                setRound((n) => n + 1);
              }
            }}
          >
            Replay {counted.toLocaleString()} {counted === 1 ? "delivery" : "deliveries"}
          </button>
        )}
      </form>
      <Problem error={action.error ?? replays.error} title="Not replayed:" />
      {replays.data && replays.data.results.length > 0 && (
        <div class="table-wrap">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Window</th>
                <th scope="col">Status</th>
                <th scope="col">Sent</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {replays.data.results.map((replay) => (
                <tr key={replay.id}>
                  <td data-label="Started">{when(replay.created)}</td>
                  <td data-label="Window" class="small">
                    {when(replay.since)} – {when(replay.until)}
                  </td>
                  <td data-label="Status">
                    <Badge value={replay.status} />
                  </td>
                  <td data-label="Sent">
                    <progress max={Math.max(1, replay.count)} value={replay.sent} aria-label={`${replay.sent} of ${replay.count} sent`} />{" "}
                    {replay.sent.toLocaleString()} of {replay.count.toLocaleString()}
                  </td>
                  <td>
                    {replay.status === "running" && (
                      <button
                        type="button"
                        class="danger"
                        disabled={action.busy}
                        onClick={async () => {
                          if ((await action.run(() => api<Replay>("DELETE", apiPath`/v1/webhooks/${id}/replays/${replay.id}/`))) !== undefined)
                            setRound((n) => n + 1);
                        }}
                      >
                        Cancel
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}
