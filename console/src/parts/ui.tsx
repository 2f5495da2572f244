import type { ComponentChildren } from "preact";
import type { ApiError, Page } from "../api";
import { count } from "../format";

export function Problem({ error, title }: { error: ApiError | null; title?: string }) {
  if (!error) return null;
  return (
    <div class="problem" role="alert">
      {title && <strong>{title}</strong>}
      {error.messages.length === 1 ? (
        <p>{error.messages[0]}</p>
      ) : (
        <ul>
          {error.messages.map((message) => (
            <li>{message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

const TONES: Record<string, string> = {
  succeeded: "good",
  settled: "good",
  active: "good",
  pending: "wait",
  held: "info",
  "in-progress": "wait",
  failed: "bad",
  canceled: "mute",
  refunded: "mute",
  paused: "mute",
  test: "info",
  running: "wait",
  done: "good",
};

export function Badge({ value, label }: { value: string; label?: string }) {
  return <span class={`badge ${TONES[value] ?? "mute"}`}>{label ?? value}</span>;
}

export function Card({ title, actions, children, id }: { title?: ComponentChildren; actions?: ComponentChildren; children: ComponentChildren; id?: string }) {
  return (
    <section class="card" aria-labelledby={id}>
      {(title || actions) && (
        <header class="card-head">
          {title && <h2 id={id}>{title}</h2>}
          {actions && <div class="actions">{actions}</div>}
        </header>
      )}
      {children}
    </section>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** A list's count and its previous/next links, as the API gave them. */
export function Pager<T>({ page, onPage, noun, one }: { page: Page<T>; onPage: (link: string) => void; noun: string; one: string }) {
  return (
    <nav class="pager" aria-label={`${noun} pages`}>
      <span>
        {count(page.count)} {page.count === 1 ? one : noun}
      </span>
      <span class="pager-buttons">
        <button type="button" class="secondary" disabled={!page.previous} onClick={() => page.previous && onPage(page.previous)}>
          ← Previous
        </button>
        <button type="button" class="secondary" disabled={!page.next} onClick={() => page.next && onPage(page.next)}>
          Next →
        </button>
      </span>
    </nav>
  );
}

export function FieldError({ messages }: { messages?: string[] }) {
  if (!messages?.length) return null;
  return <span class="field-error">{messages.join(" ")}</span>;
}

export function Stat({ label, value, hint }: { label: string; value: ComponentChildren; hint?: string }) {
  return (
    <div class="stat">
      <span class="stat-value">{value}</span>
      <span class="stat-label">{label}</span>
      {hint && <span class="stat-hint">{hint}</span>}
    </div>
  );
}

/** A counterparty by name, linked to its page; its id while the name is unknown. */
export function Party({ id, party }: { id: string; party: { name: string } | null | undefined }) {
  return (
    <a href={`#/counterparties/${encodeURIComponent(id)}`} class={party ? undefined : "mono small"} title={id}>
      {party?.name ?? id}
    </a>
  );
}

/** A record's page: where it sits, its loading and its problem; `children` draws the record once read. */
export function RecordPage<T>({
  section,
  path,
  noun,
  loaded,
  children,
}: {
  section: string;
  path: string;
  noun: string;
  loaded: { data: T | null; error: ApiError | null; loading: boolean };
  children: (record: T) => ComponentChildren;
}) {
  return (
    <div class="page">
      <p class="crumbs">
        <a href={`#${path}`}>{section}</a> / {noun}
      </p>
      <Problem error={loaded.error} />
      {!loaded.data && loaded.loading && <Loading what={`the ${noun}`} />}
      {loaded.data && children(loaded.data)}
    </div>
  );
}

/**
 * One page of a list as it loads: its problem in the API's words, a loading line, a note when it is
 * empty, its rows as `children` draws them, and its count and links (with `onPage`).
 */
export function Listed<T>({
  error,
  loading,
  page,
  noun,
  one,
  empty,
  onPage,
  children,
}: {
  error: ApiError | null;
  loading: boolean;
  page: Page<T> | null | undefined;
  noun: string;
  one: string;
  empty: string;
  onPage?: (link: string) => void;
  children: (rows: T[]) => ComponentChildren;
}) {
  return (
    <>
      <Problem error={error} />
      {loading && !page && <Loading what={noun} />}
      {page && page.results.length === 0 && <Empty>{empty}</Empty>}
      {page && page.results.length > 0 && children(page.results)}
      {page && onPage && <Pager page={page} noun={noun} one={one} onPage={onPage} />}
    </>
  );
}
