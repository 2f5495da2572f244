/** What the console's search box makes of an id. Pure. */
export type Found =
  | { kind: "page"; path: string }
  | { kind: "uuid"; id: string }
  | { kind: "none"; reason: string };

const PAGES: [prefix: string, section: string][] = [
  ["pmt_", "/payments/"],
  ["cpty_", "/counterparties/"],
  ["inv_", "/invoices/"],
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function classifyId(text: string): Found {
  const id = text.trim();
  if (!id) return { kind: "none", reason: "Type an id: a payment (pmt_…), counterparty (cpty_…), invoice (inv_…), subscription or delivery." };
  for (const [prefix, section] of PAGES) if (id.startsWith(prefix) && id.length > prefix.length) return { kind: "page", path: `${section}${id}` };
  if (UUID.test(id)) return { kind: "uuid", id: id.toLowerCase() };
  if (id.startsWith("pev_")) return { kind: "none", reason: "That is a payment event: search for its payment (pmt_…)." };
  return { kind: "none", reason: `No payment, counterparty, invoice, subscription or delivery id looks like "${id}".` };
}
