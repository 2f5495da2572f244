/**
 * The console's only way to the service: the public API, on this origin, as HTTP Basic with the
 * credentials the user signed in with. They live in sessionStorage: gone when the tab closes.
 */
export { apiPath } from "./paths";

const STORE = "payments-console.credentials";

export interface Credentials {
  username: string;
  password: string;
}

export function credentials(): Credentials | null {
  try {
    return JSON.parse(sessionStorage.getItem(STORE) ?? "null") as Credentials | null;
  } catch {
    return null;
  }
}

export function keepCredentials(value: Credentials | null): void {
  if (value) sessionStorage.setItem(STORE, JSON.stringify(value));
  else sessionStorage.removeItem(STORE);
}

/** An answer that was not 2xx, with the API's own words for it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly messages: string[],
    readonly fields: Record<string, string[]>,
  ) {
    super(messages.join(" "));
  }
}

/** The API's error body as lines to show: `detail`, or each field's messages. Pure. */
export function errorMessages(status: number, body: unknown): { messages: string[]; fields: Record<string, string[]> } {
  if (body && typeof body === "object" && !Array.isArray(body)) {
    const record = body as Record<string, unknown>;
    if (typeof record.detail === "string") return { messages: [record.detail], fields: {} };
    const fields: Record<string, string[]> = {};
    for (const [name, value] of Object.entries(record)) if (Array.isArray(value)) fields[name] = value.map(String);
    if (Object.keys(fields).length > 0) {
      return { messages: Object.entries(fields).map(([name, list]) => (name === "non_field_errors" ? list.join(" ") : `${name}: ${list.join(" ")}`)), fields };
    }
  }
  return { messages: [`The service answered ${status}.`], fields: {} };
}

export type Query = Record<string, string | string[] | undefined>;

/** `path` with `query`, repeated values as repeated parameters and empty ones left out. Pure. */
export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) if (item !== undefined && item !== "") params.append(name, item);
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** The path and query of an API link (the lists' `next` and `previous` are absolute URLs). */
export function localPath(link: string): string {
  const url = new URL(link, location.origin);
  return `${url.pathname}${url.search}`;
}

export async function api<T>(method: string, path: string, body?: unknown, who: Credentials | null = credentials()): Promise<T> {
  // Only this origin's API, and only the path as written: a path that the browser would resolve
  // elsewhere (another origin, a dot segment) is never sent with the user's credentials.
  const target = new URL(path, location.origin);
  if (target.origin !== location.origin || /(^|\/)\.{1,2}(\/|$)/.test(path.split("?")[0]!)) throw new ApiError(404, ["Not found."], {});
  const headers: Record<string, string> = { accept: "application/json" };
  if (who) headers.authorization = `Basic ${btoa(unescape(encodeURIComponent(`${who.username}:${who.password}`)))}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    // credentials "omit": our own Authorization header is sent, and a 401 never opens the browser's sign-in prompt.
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit" });
  } catch {
    throw new ApiError(0, ["The service could not be reached. Check your connection and try again."], {});
  }
  const text = await response.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!response.ok) {
    const { messages, fields } = errorMessages(response.status, data);
    if (response.status === 401 && who === credentials()) window.dispatchEvent(new Event("console:signed-out"));
    throw new ApiError(response.status, messages, fields);
  }
  return data as T;
}

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}
