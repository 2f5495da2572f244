import { useState } from "preact/hooks";
import { api, apiPath, ApiError, localPath, type Page } from "../api";
import { classifyId } from "../search";
import { go } from "../router";
import type { Subscription } from "../pages/types";

/** Where a UUID leads: a subscription, or a delivery of one of the account's subscriptions. */
async function findUuid(id: string): Promise<string | null> {
  const missing = (error: unknown) => (error instanceof ApiError && error.status === 404 ? null : Promise.reject(error));
  if (await api<Subscription>("GET", apiPath`/v1/webhooks/${id}/`).catch(missing)) return `/subscriptions/${id}`;
  for (let path: string | null = "/v1/webhooks/?page_size=100"; path; ) {
    const page: Page<Subscription> = await api<Page<Subscription>>("GET", path);
    const found = await Promise.all(page.results.map((row) => api("GET", apiPath`/v1/webhooks/${row.id}/deliveries/${id}/`).then(() => row.id, missing)));
    const owner = found.find(Boolean);
    if (owner) return `/subscriptions/${owner}/deliveries/${id}`;
    path = page.next && localPath(page.next);
  }
  return null;
}

/** Go to whatever has this id: a payment, counterparty, invoice, subscription or delivery. */
export function SearchBox() {
  const [text, setText] = useState("");
  const [problem, setProblem] = useState("");
  const [busy, setBusy] = useState(false);
  const search = async (event: Event) => {
    event.preventDefault();
    setProblem("");
    const found = classifyId(text);
    if (found.kind === "none") return setProblem(found.reason);
    if (found.kind === "page") return go(found.path);
    setBusy(true);
    try {
      const path = await findUuid(found.id);
      if (path) go(path);
      else setProblem("No subscription or delivery of this account has that id.");
    } catch (error) {
      setProblem(error instanceof ApiError ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="search" role="search" onSubmit={search}>
      <input type="search" aria-label="Search by id" placeholder="Search by id (pmt_…, cpty_…, inv_…, a subscription or delivery)" value={text} onInput={(event) => setText(event.currentTarget.value)} />
      <button type="submit" class="secondary small" disabled={busy}>
        {busy ? "Searching…" : "Go"}
      </button>
      {problem && (
        <span class="search-problem" role="alert">
          {problem}
        </span>
      )}
    </form>
  );
}
