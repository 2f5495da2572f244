/** How the console shows values. Pure. */

/** An instant in the browser's zone, with the zone named (e.g. "Nov 25, 2026, 09:12:03 AM UTC"). */
export function when(iso: string | null | undefined, timeZone?: string): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return date.toLocaleString(undefined, {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    timeZoneName: "short",
    timeZone,
  });
}

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "never";
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (seconds < 0) return `in ${duration(-seconds * 1000)}`;
  if (seconds < 5) return "just now";
  return `${duration(seconds * 1000)} ago`;
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const m = s / 60;
  if (m < 60) return `${Math.round(m)} min`;
  const h = m / 60;
  if (h < 48) return `${Math.round(h)} h`;
  return `${Math.round(h / 24)} d`;
}

export function money(cents: number, currency: string): string {
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency }).format(cents / 100);
  } catch {
    return `${(cents / 100).toFixed(2)} ${currency}`;
  }
}

export function percent(rate: number | null): string {
  return rate === null ? "—" : `${(rate * 100).toFixed(rate === 1 ? 0 : 1)}%`;
}

export function count(n: number): string {
  return n.toLocaleString();
}

/** A JSON text pretty-printed, or the text as it is when it is not JSON (a form body). */
export function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** `datetime-local` text (the browser's zone) as ISO 8601 in UTC; undefined when empty or not a date. */
export function localToIso(text: string): string | undefined {
  if (!text) return undefined;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/**
 * A form body's fields, decoded, in order (values that are JSON objects or arrays pretty-printed);
 * null when the body is not a form. Pure.
 */
export function formFields(body: string, contentType: string | null | undefined): [string, string][] | null {
  if (!contentType?.startsWith("application/x-www-form-urlencoded")) return null;
  return [...new URLSearchParams(body)].map(([name, value]) => [name, /^[[{]/.test(value) ? pretty(value) : value]);
}
