import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths };

/** A list endpoint: a GET whose 200 answers `{count, next, previous, results}`. */
export type ListPath = {
  [P in keyof paths]: paths[P] extends { get: { responses: { 200: { content: { "application/json": { results: unknown[] } } } } } } ? P : never;
}[keyof paths];

/** One row of a list endpoint's `results`. */
export type ListItem<P extends ListPath> = paths[P] extends {
  get: { responses: { 200: { content: { "application/json": { results: (infer Row)[] } } } } };
}
  ? Row
  : never;

type ListInit<P extends ListPath> = paths[P] extends { get: { parameters: infer Parameters } } ? { params: Parameters } : never;

export interface ClientOptions {
  /** The service's origin, e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** An API user (HTTP Basic), or the operator's ADMIN_TOKEN for `/admin/` paths. */
  auth: { username: string; password: string } | { token: string };
  /** A fetch to send requests with (a test's Worker, a proxy); the global fetch by default. */
  fetch?: (request: Request) => Promise<Response>;
  /** Makes the Idempotency-Key of a POST that has none; a random UUID by default. */
  idempotencyKey?: () => string;
}

export type PaymentsClient = Client<paths> & {
  /** Every row of a list, following `next` page by page (filters and ordering as given). */
  each<P extends ListPath>(path: P, init: ListInit<P>): AsyncGenerator<ListItem<P>>;
  /** The newest `Payments-Bookmark` an answer carried, which every later request sends; null before the first. */
  bookmark(): string | null;
};

const BOOKMARK = "payments-bookmark";

/**
 * The newer of two `Payments-Bookmark`s (`b1.<shard>.<D1 bookmark>.<tag>`): on one shard, the
 * greater D1 bookmark (D1's sort oldest to newest as text); across shards (the account moved), the
 * one that came last.
 */
export function newerBookmark(held: string | null, came: string): string {
  if (held === null) return came;
  const [, heldShard, heldAt] = held.split(".");
  const [, cameShard, cameAt] = came.split(".");
  return heldShard === cameShard && (heldAt ?? "") > (cameAt ?? "") ? held : came;
}

function authorization(auth: ClientOptions["auth"]): string {
  if ("token" in auth) return `Bearer ${auth.token}`;
  const bytes = new TextEncoder().encode(`${auth.username}:${auth.password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}

/**
 * A typed client for the Payments API (openapi-fetch over the generated `paths`). Every POST carries an
 * Idempotency-Key unless the call sets one: a retry of the same call with the same key is answered once.
 * Every request sends back the newest `Payments-Bookmark` an answer gave (unless the call sets one),
 * so the client reads its own writes even where a read replica answers.
 */
export function createPaymentsClient(options: ClientOptions): PaymentsClient {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const newKey = options.idempotencyKey ?? (() => crypto.randomUUID());
  const headers = { authorization: authorization(options.auth) };
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ""), fetch: send, headers });
  let bookmark: string | null = null;
  const keep = (response: Response) => {
    const came = response.headers.get(BOOKMARK);
    if (came) bookmark = newerBookmark(bookmark, came);
  };
  const withBookmark = (request: Request) => {
    if (bookmark !== null && !request.headers.has(BOOKMARK)) request.headers.set(BOOKMARK, bookmark);
    return request;
  };
  client.use({
    onRequest({ request }) {
      if (request.method === "POST" && !request.headers.has("idempotency-key")) request.headers.set("idempotency-key", newKey());
      return withBookmark(request);
    },
    onResponse({ response }) {
      keep(response);
      return response;
    },
  });

  async function* each<P extends ListPath>(path: P, init: ListInit<P>): AsyncGenerator<ListItem<P>> {
    type Page = { next: string | null; results: ListItem<P>[] };
    const get = client.GET as unknown as (path: P, init: ListInit<P>) => Promise<{ data?: Page; error?: unknown; response: Response }>;
    let page = await get(path, init);
    for (;;) {
      if (!page.data) throw new PaymentsApiError(page.response.status, page.error);
      yield* page.data.results;
      if (!page.data.next) return;
      const response = await send(withBookmark(new Request(page.data.next, { headers })));
      keep(response);
      const body: unknown = await response.json();
      page = response.ok ? { data: body as Page, response } : { error: body, response };
    }
  }

  return Object.assign(client, { each, bookmark: () => bookmark });
}

/** A list page that did not answer 200 while `each` followed `next`. */
export class PaymentsApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`The API answered ${status}: ${JSON.stringify(body)}`);
    this.name = "PaymentsApiError";
  }
}
