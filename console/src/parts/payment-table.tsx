import { money, when } from "../format";
import { useLoad } from "./load";
import { counterparties } from "./names";
import { Badge, Party } from "./ui";
import { href } from "../router";
import type { Payment } from "../pages/types";

/** Payments as rows, with their counterparties by name. */
export function PaymentTable({ payments }: { payments: Payment[] }) {
  const ids = payments.flatMap((row) => [row.originating_counterparty_id, row.receiving_counterparty_id]);
  const names = useLoad(() => counterparties(ids), ids.join(","));
  return (
    <div class="table-wrap">
      <table class="stack">
        <thead>
          <tr>
            <th scope="col">Payment</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Amount
            </th>
            <th scope="col">From → to</th>
            <th scope="col">Method</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {payments.map((row) => (
            <tr key={row.id}>
              <td data-label="Payment" class="mono small">
                <a href={href(`/payments/${row.id}`)}>{row.id}</a>
              </td>
              <td data-label="Status">
                <Badge value={row.status} />
              </td>
              <td data-label="Amount" class="num">
                {money(row.amount_cents, row.currency)}
              </td>
              <td data-label="From → to">
                <Party id={row.originating_counterparty_id} party={names.data?.get(row.originating_counterparty_id)} /> →{" "}
                <Party id={row.receiving_counterparty_id} party={names.data?.get(row.receiving_counterparty_id)} />
              </td>
              <td data-label="Method">{row.payment_method}</td>
              <td data-label="Updated">{when(row.updated)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
