import { beforeAll, describe, expect, it } from "vitest";
import { call, makeCounterparty, makeInvoice, makePayment, makeTenant, type User } from "./helpers/api";

/**
 * How lists read their query, case by case, beside what Django REST framework 3.14's
 * PageNumberPagination and django-filter 23.1's CharFilter, ChoiceFilter, IsoDateTimeFilter and
 * `__in` lookups answer for the same rows (docs/interface.md lists where we differ on purpose).
 * The account holds 9 counterparties: buyers ID-0, ID-2, ID-4, ID-6, ID-8 and suppliers ID-1,
 * ID-3, ID-5, ID-7, made in that order.
 */
let client: User;
const internalIds = (json: { results: { internal_id: string }[] }) => json.results.map((row) => row.internal_id.split("~")[1]!);
let prefix: string;

beforeAll(async () => {
  ({ client } = await makeTenant());
  prefix = crypto.randomUUID().slice(0, 8);
  const made = [];
  for (let i = 0; i < 9; i++) made.push(await makeCounterparty(client, i % 2 === 0 ? "buyer" : "supplier", { internal_id: `${prefix}~ID-${i}` }));
  // Three invoices (two here, one paid below) and one pending payment.
  for (const number of ["A-1", "A-2"]) await makeInvoice(client, made[0].id, made[1].id, { invoice_number: number });
  await makePayment(client, { buyer: made[2], supplier: made[3] });
});

const list = (query: string) => call("GET", `/v1/counterparties/?${query.replaceAll("{p}", prefix)}`, { headers: client.headers });

describe("lists read their query as Django REST framework does", () => {
  const ALL = ["ID-0", "ID-1", "ID-2", "ID-3", "ID-4", "ID-5", "ID-6", "ID-7", "ID-8"];
  const BUYERS = ["ID-0", "ID-2", "ID-4", "ID-6", "ID-8"];
  it.each([
    // A value given twice counts once (ChoiceFilter, CharFilter): no row comes twice.
    ["type=buyer&type=buyer", 5, BUYERS],
    ["internal_id={p}~ID-1&internal_id={p}~ID-1", 1, ["ID-1"]],
    // An empty value is no filter.
    ["type=", 9, ALL],
    ["internal_id=", 9, ALL],
    // Text values are stripped of surrounding spaces (CharField).
    ["internal_id=%20{p}~ID-1%20", 1, ["ID-1"]],
    ["internal_id=%20&type=buyer", 5, BUYERS],
    // `__in` takes comma-separated values, the same as repeating the parameter.
    ["internal_id__in={p}~ID-1,{p}~ID-2", 2, ["ID-1", "ID-2"]],
    ["internal_id__in={p}~ID-1,,{p}~ID-2", 2, ["ID-1", "ID-2"]],
    ["internal_id={p}~ID-3&internal_id__in={p}~ID-1,{p}~ID-2", 3, ["ID-1", "ID-2", "ID-3"]],
    ["type__in=buyer", 5, BUYERS],
    ["type__in=buyer,supplier", 9, ALL],
    ["type__in=", 9, ALL],
    // page_size: the last value counts; zero, negative, empty or not a number is the default; too large is clamped.
    ["page_size=2&page_size=4", 9, ["ID-0", "ID-1", "ID-2", "ID-3"]],
    ["page_size=99999999999", 9, ALL],
    ["page_size=0", 9, ALL],
    ["page_size=-3", 9, ALL],
    ["page_size=abc", 9, ALL],
    ["page_size=", 9, ALL],
    ["page_size=%204%20", 9, ["ID-0", "ID-1", "ID-2", "ID-3"]],
    // page: the last value counts; Python's int() reads spaces, a sign and leading zeros; `last` is the last page.
    ["page=2&page=1&page_size=4", 9, ["ID-0", "ID-1", "ID-2", "ID-3"]],
    ["page=%202%20&page_size=4", 9, ["ID-4", "ID-5", "ID-6", "ID-7"]],
    ["page=%2B2&page_size=4", 9, ["ID-4", "ID-5", "ID-6", "ID-7"]],
    ["page=002&page_size=4", 9, ["ID-4", "ID-5", "ID-6", "ID-7"]],
    ["page=last&page_size=4", 9, ["ID-8"]],
    ["page=last&page_size=3", 9, ["ID-6", "ID-7", "ID-8"]],
    ["page=last", 9, ALL],
    ["type=buyer&page=last&page_size=2", 5, ["ID-8"]],
  ])("?%s answers %d rows counted, this page's in order", async (query, count, page) => {
    const res = await list(query);
    expect(res.status).toBe(200);
    expect(res.json.count).toBe(count);
    expect(internalIds(res.json)).toEqual(page);
  });

  it.each([
    ["type=%20buyer", 400, { type: ["Select a valid choice.  buyer is not one of the available choices."] }],
    ["type=foo", 400, { type: ["Select a valid choice. foo is not one of the available choices."] }],
    ["type__in=buyer,foo", 400, { type__in: ["Select a valid choice. foo is not one of the available choices."] }],
    ["internal_id=a%00b", 400, { internal_id: ["Null characters are not allowed."] }],
    ["page=", 404, { detail: "Invalid page." }],
    ["page=0", 404, { detail: "Invalid page." }],
    ["page=-1", 404, { detail: "Invalid page." }],
    ["page=1.0", 404, { detail: "Invalid page." }],
    ["page=first", 404, { detail: "Invalid page." }],
    ["page=99", 404, { detail: "Invalid page." }],
    ["page=3&page_size=5", 404, { detail: "Invalid page." }],
  ])("?%s answers %d", async (query, status, body) => {
    const res = await list(query);
    expect(res.status).toBe(status);
    expect(res.json).toEqual(body);
  });

  it("links the last page back to the one before it, and following next from page 1 ends on it", async () => {
    const last = await list("page=last&page_size=4");
    expect(last.json.next).toBeNull();
    const previous = await call("GET", new URL(last.json.previous).pathname + new URL(last.json.previous).search, { headers: client.headers });
    expect(internalIds(previous.json)).toEqual(["ID-4", "ID-5", "ID-6", "ID-7"]);

    const seen: string[] = [];
    let res = await list("type=buyer&type=buyer&page_size=2");
    for (;;) {
      seen.push(...internalIds(res.json));
      if (!res.json.next) break;
      const next = new URL(res.json.next);
      res = await call("GET", next.pathname + next.search, { headers: client.headers });
    }
    expect(seen).toEqual(BUYERS);
  });

  it("answers an empty list's last page as page 1", async () => {
    const res = await list("internal_id=nobody&page=last");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ count: 0, next: null, previous: null, results: [] });
  });

  it("answers a path with a doubled slash 404, not 405", async () => {
    const res = await call("GET", "/v1/counterparties//", { headers: client.headers });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ detail: "Not found." });
    expect(res.headers.get("allow")).toBeNull();
  });
});

describe("date/time filters read their value as IsoDateTimeFilter does", () => {
  it.each([
    // An empty value is no filter.
    ["created__gte=", 3],
    ["created__gte=&created__lt=", 3],
    // Django's parse_datetime takes one-digit fields, and the value is stripped.
    ["created__gte=2020-1-2T9:5:3Z", 3],
    ["created__gte=%202020-01-02T09:05:03Z%20", 3],
    ["created__gte=2999-1-1", 0],
    // The last of a repeated value counts.
    ["created__gte=2020-01-01&created__gte=2999-01-01", 0],
    ["created__gte=2999-01-01&created__gte=2020-01-01", 3],
  ])("?%s matches %d", async (query, count) => {
    const res = await call("GET", `/v1/invoices/?${query}`, { headers: client.headers });
    expect(res.status).toBe(200);
    expect(res.json.count).toBe(count);
  });

  it.each(["0000-01-01", "0000-01-01T00:00:00Z", "2026-011-01", "2026-11-01T100:00", "yesterday"])("?created__gte=%s answers 400", async (value) => {
    const res = await call("GET", `/v1/invoices/?created__gte=${value}`, { headers: client.headers });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ created__gte: ["Enter a valid date/time."] });
  });
});

describe("every repeatable filter", () => {
  it.each([
    ["/v1/invoices/", "invoice_number"],
    ["/v2/payments/", "status"],
    ["/v2/payments/", "originating_counterparty_id"],
    ["/v2/payments/", "receiving_counterparty_id"],
  ])("%s?%s= is no filter, and its __in form is served", async (path, name) => {
    const all = await call("GET", path, { headers: client.headers });
    // Rows to filter out: a filter left unapplied would answer them.
    expect(all.json.count).toBeGreaterThan(0);
    const empty = await call("GET", `${path}?${name}=`, { headers: client.headers });
    expect(empty.status).toBe(200);
    expect(empty.json.count).toBe(all.json.count);
    const none = await call("GET", `${path}?${name}__in=${name === "status" ? "refunded" : "nothing"}`, { headers: client.headers });
    expect(none.status).toBe(200);
    expect(none.json.count).toBe(0);
  });

  it("payments take an empty ordering as the default", async () => {
    const res = await call("GET", "/v2/payments/?ordering=", { headers: client.headers });
    expect(res.status).toBe(200);
  });
});
