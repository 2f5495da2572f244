import { api, apiPath } from "../api";
import type { Counterparty } from "../pages/types";

// Counterparties change rarely and the tab is short-lived: each is read once per page load.
const known = new Map<string, Promise<Counterparty | null>>();

/** The counterparties with these ids (null for one that cannot be read), read once each. */
export async function counterparties(ids: string[]): Promise<Map<string, Counterparty | null>> {
  for (const id of new Set(ids)) {
    if (!known.has(id))
      known.set(
        id,
        api<Counterparty>("GET", apiPath`/v1/counterparties/${id}/`).catch(() => null),
      );
  }
  return new Map(await Promise.all([...new Set(ids)].map(async (id) => [id, await known.get(id)!] as const)));
}
