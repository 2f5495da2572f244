import { useEffect, useState } from "preact/hooks";
import { api, localPath, withQuery, type Page } from "../api";
import { money, when } from "../format";
import { useLoad } from "../parts/load";
import { counterparties } from "../parts/names";
import { Card, Listed, Party } from "../parts/ui";
import { go, href } from "../router";
import type { Invoice } from "./types";

/** The account's invoices, by number, paged by the API's links. */
export function Invoices({ query }: { query: URLSearchParams }) {
  const number = query.get("invoice_number") ?? "";
  const first = withQuery("/v1/invoices/", { page_size: "25", invoice_number: number });
  const [path, setPath] = useState(first);
  useEffect(() => setPath(first), [first]);
  const list = useLoad(async () => {
    const page = await api<Page<Invoice>>("GET", path);
    return { page, names: await counterparties(page.results.flatMap((row) => [row.buyer_id, row.supplier_id])) };
  }, path);
  const [draft, setDraft] = useState(number);
  useEffect(() => setDraft(number), [number]);
  return (
    <div class="page">
      <div class="page-head">
        <h1 tabIndex={-1}>Invoices</h1>
      </div>
      <Card>
        <form
          class="filters"
          aria-label="Filter invoices"
          onSubmit={(event) => {
            event.preventDefault();
            go("/invoices", { invoice_number: draft.trim() || undefined });
          }}
        >
          <label>
            Invoice number
            <input name="invoice_number" value={draft} onInput={(event) => setDraft(event.currentTarget.value)} />
          </label>
          <button type="submit" class="secondary">
            Find
          </button>
        </form>
        <Listed
          error={list.error}
          loading={list.loading}
          page={list.data?.page}
          noun="invoices"
          one="invoice"
          empty="No invoices match."
          onPage={(link) => setPath(localPath(link))}
        >
          {(rows) => (
            <div class="table-wrap">
              <table class="stack">
                <thead>
                  <tr>
                    <th scope="col">Number</th>
                    <th scope="col" class="num">
                      Amount
                    </th>
                    <th scope="col">Buyer</th>
                    <th scope="col">Supplier</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((row) => (
                    <tr key={row.id}>
                      <td data-label="Number">
                        <a href={href(`/invoices/${row.id}`)} class="strong">
                          {row.invoice_number}
                        </a>
                      </td>
                      <td data-label="Amount" class="num">
                        {money(row.amount_cents, row.currency)}
                      </td>
                      <td data-label="Buyer">
                        <Party id={row.buyer_id} party={list.data!.names.get(row.buyer_id)} />
                      </td>
                      <td data-label="Supplier">
                        <Party id={row.supplier_id} party={list.data!.names.get(row.supplier_id)} />
                      </td>
                      <td data-label="Created">{when(row.created)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Listed>
      </Card>
    </div>
  );
}
