import { countKey, givenFilters, storedCountKey, type CountKey, type Resource } from "./stored";
import { timeCountField } from "./time";

/** Which count answers a list (rule 1 of this room): a stored count, a timestamp's buckets (one status's, for payments), or its matches. */
export type CountChoice = { by: "stored"; key: CountKey } | { by: "buckets"; field: string; status?: string } | { by: "matches" };

/** Which buckets a list's `page=N` seeks by (rule 4), or null: it pages by OFFSET. */
export type SeekChoice = { field: string; status?: string } | null;

/** What a list keeps counts of: the timestamps it has buckets for, the one it is sorted by, and whether it keeps them per status (payments). */
export interface Counted {
  fields: readonly string[];
  sort: string;
  perStatus?: boolean;
}

/**
 * Which count answers a list with `filters`, and which buckets its `page=N` seeks by: the first
 * of a stored count, a timestamp's buckets (the filters only bound it), or, for a list counted per
 * status, that status's `created` buckets (one status and at most bounds on `created`); else its
 * matches. It seeks by the sort timestamp's buckets when they count the whole list or its filters,
 * or by the status's for a list sorted by `created`. Pure: the lists build their queries from it.
 */
export function countingOf(resource: Resource, filters: object, counted: Counted): { count: CountChoice; seek: SeekChoice } {
  const stored = storedCountKey(resource, filters);
  const field = timeCountField(filters, counted.fields);
  const status = counted.perStatus ? oneStatusWithCreated(filters) : undefined;
  const count: CountChoice = stored
    ? { by: "stored", key: stored }
    : field
      ? { by: "buckets", field }
      : status
        ? { by: "buckets", field: "created", status }
        : { by: "matches" };
  const whole = stored === countKey(resource);
  const seek: SeekChoice =
    (whole || field === counted.sort) && counted.fields.includes(counted.sort)
      ? { field: counted.sort }
      : status && counted.sort === "created"
        ? { field: "created", status }
        : null;
  return { count, seek };
}

/** The status of filters that name exactly one status and nothing but bounds on `created`. Pure. */
export function oneStatusWithCreated(filters: object): string | undefined {
  const status = (filters as { status?: string[] }).status;
  if (status?.length !== 1) return undefined;
  const rest = { ...filters, status: undefined };
  return givenFilters(rest).length === 0 || timeCountField(rest, ["created"]) === "created" ? status[0] : undefined;
}
