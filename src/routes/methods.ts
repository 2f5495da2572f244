/**
 * The methods a path answers to, for 405 and its Allow header. Hono answers an unrouted method
 * with not-found; this tells the two apart by matching the path against every route's pattern.
 */
export function allowedMethods(routes: readonly { path: string; method: string }[], path: string): string[] {
  const methods = new Set<string>();
  // One trailing slash is the same path (every path is served with and without it); `//` is another path.
  const trimmed = path.length > 1 ? path.replace(/\/$/, "") : path;
  for (const route of routes) {
    if (route.method === "ALL" || route.path.includes("*")) continue;
    if (patternOf(route.path).test(trimmed)) methods.add(route.method.toUpperCase());
  }
  if (methods.has("GET")) methods.add("HEAD");
  if (methods.size > 0) methods.add("OPTIONS");
  return [...methods].sort();
}

const patterns = new Map<string, RegExp>();

function patternOf(routePath: string): RegExp {
  let pattern = patterns.get(routePath);
  if (!pattern) {
    const body = routePath
      .replace(/\/+$/, "")
      .split("/")
      .map((part) => (part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("/");
    pattern = new RegExp(`^${body || "/"}$`);
    patterns.set(routePath, pattern);
  }
  return pattern;
}
