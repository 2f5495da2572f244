import { useEffect, useState } from "preact/hooks";
import { api, localPath, withQuery, type Page } from "../api";
import { when } from "../format";
import { useLoad } from "../parts/load";
import { Badge, Card, Listed } from "../parts/ui";
import { go, href } from "../router";
import type { Counterparty } from "./types";

/** The account's buyers and suppliers, by type, paged by the API's links. */
export function Counterparties({ query }: { query: URLSearchParams }) {
  const type = query.get("type") ?? "";
  const first = withQuery("/v1/counterparties/", { page_size: "25", type });
  const [path, setPath] = useState(first);
  useEffect(() => setPath(first), [first]);
  const list = useLoad(() => api<Page<Counterparty>>("GET", path), path);
  return (
    <div class="page">
      <div class="page-head">
        <h1 tabIndex={-1}>Counterparties</h1>
      </div>
      <Card>
        <form class="filters" aria-label="Filter counterparties" onSubmit={(event) => event.preventDefault()}>
          <label>
            Type
            <select name="type" value={type} onChange={(event) => go("/counterparties", { type: event.currentTarget.value || undefined })}>
              <option value="">Buyers and suppliers</option>
              <option value="buyer">Buyers</option>
              <option value="supplier">Suppliers</option>
            </select>
          </label>
        </form>
        <Listed
          error={list.error}
          loading={list.loading}
          page={list.data}
          noun="counterparties"
          one="counterparty"
          empty="No counterparties match."
          onPage={(link) => setPath(localPath(link))}
        >
          {(rows) => (
            <div class="table-wrap">
              <table class="stack">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Type</th>
                    <th scope="col">Internal id</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((row) => (
                    <tr key={row.id}>
                      <td data-label="Name">
                        <a href={href(`/counterparties/${row.id}`)} class="strong">
                          {row.name}
                        </a>
                      </td>
                      <td data-label="Type">
                        <Badge value={row.type} />
                      </td>
                      <td data-label="Internal id" class="mono small">
                        {row.internal_id}
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
