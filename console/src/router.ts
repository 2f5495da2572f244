import { useEffect, useState } from "preact/hooks";

/** Where the console is: the part of the address after `#`, as a path and its query. */
export interface Place {
  path: string;
  query: URLSearchParams;
}

function here(): Place {
  const [path = "/", search = ""] = location.hash.replace(/^#/, "").split("?");
  return { path: path || "/", query: new URLSearchParams(search) };
}

export function usePlace(): Place {
  const [place, setPlace] = useState(here);
  useEffect(() => {
    const update = () => setPlace(here());
    window.addEventListener("hashchange", update);
    return () => window.removeEventListener("hashchange", update);
  }, []);
  return place;
}

export const href = (path: string, query?: Record<string, string | undefined>) => {
  const params = new URLSearchParams(Object.entries(query ?? {}).filter((entry): entry is [string, string] => Boolean(entry[1])));
  const text = params.toString();
  return `#${path}${text ? `?${text}` : ""}`;
};

export function go(path: string, query?: Record<string, string | undefined>): void {
  location.hash = href(path, query);
}

/** The parts of `path` matching a pattern like `/subscriptions/:id`, or null. Pure. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const names: string[] = [];
  const regex = new RegExp(`^${pattern.replace(/:(\w+)/g, (_, name: string) => (names.push(name), "([^/]+)"))}/?$`);
  const found = regex.exec(path);
  if (!found) return null;
  return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1]!)]));
}
