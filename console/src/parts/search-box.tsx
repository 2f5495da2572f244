import { useState } from "preact/hooks";
import { api, apiPath, ApiError, localPath, type Page } from "../api";
import { classifyId, matchText, NAMES_SEARCHED, type Match } from "../search";
import { go } from "../router";
import type { Counterparty, Invoice, Subscription } from "../pages/types";

/** Where a UUID leads: a subscription, or a delivery of one of the account's subscriptions. */
async function findUuid(id: string): Promise<string | null> {
  const missing = (error: unknown) => (error instanceof ApiError && error.status === 404 ? null : Promise.reject(error));
  if (await api<Subscription>("GET", apiPath`/v1/webhooks/${id}/`).catch(missing)) return `/subscriptions/${id}`;
  for (let path: string | null = "/v1/webhooks/?page_size=100"; path;) {
    const page: Page<Subscription> = await api<Page<Subscription>>("GET", path);
    const found = await Promise.all(page.results.map((row) => api("GET", apiPath`/v1/webhooks/${row.id}/deliveries/${id}/`).then(() => row.id, missing)));
    const owner = found.find(Boolean);
    if (owner) return `/subscriptions/${owner}/deliveries/${id}`;
    path = page.next && localPath(page.next);
  }
  return null;
}

/** What a text matches: invoices by number, counterparties by internal id, and by name among the first NAMES_SEARCHED. */
async function findText(text: string): Promise<Match[]> {
  const query = encodeURIComponent(text);
  const [invoices, byInternalId, counterparties] = await Promise.all([
    api<Page<Invoice>>("GET", `/v1/invoices/?invoice_number=${query}&page_size=20`),
    api<Page<Counterparty>>("GET", `/v1/counterparties/?internal_id=${query}&page_size=20`),
    api<Page<Counterparty>>("GET", `/v1/counterparties/?page_size=${NAMES_SEARCHED}`),
  ]);
  return matchText(text, { invoices: invoices.results, byInternalId: byInternalId.results, counterparties: counterparties.results });
}

/** Go to whatever this names: a payment, counterparty, invoice, subscription or delivery by id; an invoice by number; a counterparty by name or internal id. */
export function SearchBox() {
  const [text, setText] = useState("");
  const [problem, setProblem] = useState("");
  const [matches, setMatches] = useState<Match[]>([]);
  const [busy, setBusy] = useState(false);
  const search = async (event: Event) => {
    event.preventDefault();
    setProblem("");
    setMatches([]);
    const found = classifyId(text);
    if (found.kind === "none") return setProblem(found.reason);
    if (found.kind === "page") return go(found.path);
    setBusy(true);
    try {
      if (found.kind === "uuid") {
        const path = await findUuid(found.id);
        if (path) go(path);
        else setProblem("No subscription or delivery of this account has that id.");
      } else {
        const list = await findText(found.text);
        if (list.length === 1) go(list[0]!.path);
        else if (list.length === 0) setProblem(`No invoice number, counterparty internal id or name matches "${found.text}".`);
        else setMatches(list);
      }
    } catch (error) {
      setProblem(error instanceof ApiError ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="search" role="search" onSubmit={search}>
      <input
        type="search"
        aria-label="Search"
        placeholder="Search: an id, an invoice number, a counterparty"
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
      />
      <button type="submit" class="secondary small" disabled={busy}>
        {busy ? "Searching…" : "Go"}
      </button>
      {problem && (
        <span class="search-problem" role="alert">
          {problem}
        </span>
      )}
      {matches.length > 0 && (
        <ul class="search-matches" aria-label="Matches">
          {matches.map((match) => (
            <li key={match.path}>
              <a href={`#${match.path}`} onClick={() => setMatches([])}>
                {match.label}
              </a>{" "}
              <span class="muted small">{match.what}</span>
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}
