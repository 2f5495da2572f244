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
};

function authorization(auth: ClientOptions["auth"]): string {
  if ("token" in auth) return `Bearer ${auth.token}`;
  const bytes = new TextEncoder().encode(`${auth.username}:${auth.password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}

/**
 * A typed client for the Payments API (openapi-fetch over the generated `paths`). Every POST carries an
 * Idempotency-Key unless the call sets one: a retry of the same call with the same key is answered once.
 */
export function createPaymentsClient(options: ClientOptions): PaymentsClient {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const newKey = options.idempotencyKey ?? (() => crypto.randomUUID());
  const headers = { authorization: authorization(options.auth) };
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ""), fetch: send, headers });
  client.use({
    onRequest({ request }) {
      if (request.method === "POST" && !request.headers.has("idempotency-key")) request.headers.set("idempotency-key", newKey());
      return request;
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
      const response = await send(new Request(page.data.next, { headers }));
      const body: unknown = await response.json();
      page = response.ok ? { data: body as Page, response } : { error: body, response };
    }
  }

  return Object.assign(client, { each });
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
