/** What the console's search box makes of what was typed. Pure. */
export type Found = { kind: "page"; path: string } | { kind: "uuid"; id: string } | { kind: "text"; text: string } | { kind: "none"; reason: string };

const PAGES: [prefix: string, section: string][] = [
  ["pmt_", "/payments/"],
  ["cpty_", "/counterparties/"],
  ["inv_", "/invoices/"],
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function classifyId(text: string): Found {
  const id = text.trim();
  if (!id)
    return {
      kind: "none",
      reason: "Type an id (pmt_…, cpty_…, inv_…, a subscription or delivery), an invoice number, or a counterparty's name or internal id.",
    };
  for (const [prefix, section] of PAGES) {
    if (id === prefix) return { kind: "none", reason: `An id goes on after "${prefix}".` };
    if (id.startsWith(prefix)) return { kind: "page", path: `${section}${id}` };
  }
  if (UUID.test(id)) return { kind: "uuid", id: id.toLowerCase() };
  if (id.startsWith("pev_")) return { kind: "none", reason: "That is a payment event: search for its payment (pmt_…)." };
  return { kind: "text", text: id };
}

/** A record the text found, to go to. */
export interface Match {
  label: string;
  what: string;
  path: string;
}

/** How many counterparties a name is looked for among (one page of the list). */
export const NAMES_SEARCHED = 1000;

/**
 * What a text matches: invoices whose number it is, counterparties whose internal id it is, and
 * counterparties whose name holds it (any case), each once, in that order. Pure.
 */
export function matchText(
  text: string,
  found: {
    invoices: { id: string; invoice_number: string }[];
    byInternalId: { id: string; name: string; internal_id: string; type: string }[];
    counterparties: { id: string; name: string; internal_id: string; type: string }[];
  },
): Match[] {
  const needle = text.toLocaleLowerCase();
  const matches: Match[] = found.invoices.map((row) => ({ label: `Invoice ${row.invoice_number}`, what: row.id, path: `/invoices/${row.id}` }));
  const parties = [...found.byInternalId, ...found.counterparties.filter((row) => row.name.toLocaleLowerCase().includes(needle))];
  const seen = new Set<string>();
  for (const row of parties) {
    if (seen.has(row.id)) continue;
    seen.add(row.id);
    matches.push({ label: row.name, what: `${row.type} ${row.internal_id}`, path: `/counterparties/${row.id}` });
  }
  return matches;
}
