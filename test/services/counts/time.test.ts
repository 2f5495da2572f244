import { describe, expect, it, vi } from "vitest";
import { parseInstant } from "../../../src/lib/time";
import { oneStatusWithCreated } from "../../../src/services/counts/choice";
import { rangeOf, timeCountField } from "../../../src/services/counts/time";
import { call, insertInvoiceAt, makeCounterparty, makePayment, makeTenant } from "../../helpers/api";

const at = (text: string) => parseInstant(text)!;

describe("timeCountField", () => {
  it.each([
    [{}, null],
    [{ created__gte: at("2026-01-01") }, "created"],
    [{ created__gte: at("2026-01-01"), created__lt: at("2026-02-01") }, "created"],
    [{ updated__gt: at("2026-01-01"), ordering: "updated" }, "updated"],
    [{ created__gte: at("2026-01-01"), updated__gt: at("2026-01-01") }, null],
    [{ created__gte: at("2026-01-01"), status: ["pending"] }, null],
    [{ status: ["pending"] }, null],
  ] as const)("%j -> %s", (filters, field) => {
    expect(timeCountField(filters, ["created", "updated"])).toBe(field);
  });
});

describe("rangeOf", () => {
  it.each([
    [{ created__gte: at("2026-01-01T00:00:00.000Z") }, [Date.UTC(2026, 0, 1), 8_640_000_000_000_000]],
    [{ created__gt: at("2026-01-01T00:00:00.000Z") }, [Date.UTC(2026, 0, 1) + 1, 8_640_000_000_000_000]],
    [{ created__gte: at("2026-01-01T00:00:00.0004Z") }, [Date.UTC(2026, 0, 1) + 1, 8_640_000_000_000_000]],
    [{ created__lt: at("2026-01-01T00:00:00.000Z") }, [0, Date.UTC(2026, 0, 1)]],
    [{ created__lte: at("2026-01-01T00:00:00.000Z") }, [0, Date.UTC(2026, 0, 1) + 1]],
    [{ created__lte: at("2026-01-01T00:00:00.0009Z") }, [0, Date.UTC(2026, 0, 1) + 1]],
    [{ created__gt: at("2026-01-02"), created__lt: at("2026-01-01") }, [Date.UTC(2026, 0, 2) + 1, Date.UTC(2026, 0, 1)]],
  ] as const)("%j -> %j", (filters, range) => {
    expect(rangeOf("created", filters as never)).toEqual(range);
  });
});

// Counts from buckets against the rows themselves (the page holds every match).
describe("time-range counts", () => {
  it("equal the matching invoices, at every bucket edge and below the millisecond", async () => {
    const { account, client } = await makeTenant();
    const buyer = await makeCounterparty(client, "buyer");
    const supplier = await makeCounterparty(client, "supplier");
    const instants = [
      "2026-01-30T23:59:59.999Z",
      "2026-01-31T00:00:00.000Z",
      "2026-01-31T00:00:00.001Z",
      "2026-03-01T11:59:59.999Z",
      "2026-03-01T12:00:00.000Z",
      "2026-03-01T12:00:59.999Z",
      "2026-03-01T12:01:00.000Z",
      "2026-03-01T12:01:00.500Z",
      "2026-03-02T00:00:00.000Z",
      "2026-06-15T08:30:30.030Z",
      "2026-06-15T08:30:30.031Z",
    ];
    for (const iso of instants) await insertInvoiceAt(account.id, buyer.id, supplier.id, iso);
    const filters = [
      "created__gte=2026-01-31",
      "created__gt=2026-01-31T00:00:00Z",
      "created__lt=2026-03-01T12:00:00Z",
      "created__lte=2026-03-01T12:00:59.999Z",
      "created__gte=2026-03-01T12:00:00Z&created__lt=2026-03-01T12:01:00.5Z",
      "created__gt=2026-06-15T08:30:30.0301Z",
      "created__gte=2026-06-15T08:30:30.0301Z",
      "created__lte=2026-06-15T08:30:30.0309",
      "created__gte=2025-01-01&created__lte=2027-01-01",
      "created__gt=2026-07-01",
      "created__gt=2026-03-01&created__lt=2026-01-01",
    ];
    for (const filter of filters) {
      const res = await call("GET", `/v1/invoices/?${filter}&page_size=1000`, { headers: client.headers });
      expect(res.status, filter).toBe(200);
      expect(res.json.count, filter).toBe(res.json.results.length);
    }
  });

  it("follow payments as they are created and updated", async () => {
    const { client, processor } = await makeTenant();
    const parties = { buyer: await makeCounterparty(client, "buyer"), supplier: await makeCounterparty(client, "supplier") };
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await makePayment(client, parties)).payment);
    const middle = made[2]!.updated;
    for (const payment of made.slice(0, 3)) {
      await call("POST", `/v2/payments/${payment.id}/events/`, {
        body: { event_code: "PU10", description: "go", status: "in-progress" },
        headers: processor.headers,
      });
    }
    for (const filter of [`updated__gt=${middle}`, `updated__lte=${middle}`, `created__gt=${middle}`, `updated__gte=${made[0]!.created}&ordering=updated`]) {
      const res = await call("GET", `/v2/payments/?${filter}&page_size=1000`, { headers: client.headers });
      expect(res.json.count, filter).toBe(res.json.results.length);
    }
    expect((await call("GET", `/v2/payments/?updated__gt=${middle}`, { headers: client.headers })).json.count).toBe(5);
  });
});

describe("updated, counted as created plus its moves", () => {
  it("counts and pages updated ranges exactly when events move updated across a second, a minute, an hour and days", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const t0 = Date.UTC(2026, 0, 5, 10, 0, 0, 0);
      vi.setSystemTime(t0);
      const { client, processor } = await makeTenant();
      const parties = { buyer: await makeCounterparty(client, "buyer"), supplier: await makeCounterparty(client, "supplier") };
      const made: { id: string }[] = [];
      for (let i = 0; i < 5; i++) {
        vi.setSystemTime(t0 + i * 7);
        made.push((await makePayment(client, parties)).payment);
      }
      // Events later by 1.5 s, 2 min, 3 h, 2 days and 40 days, one payment moved twice.
      for (const [i, later] of [
        [0, 1_500],
        [1, 120_000],
        [2, 3 * 3_600_000],
        [0, 2 * 86_400_000],
        [3, 40 * 86_400_000],
      ] as const) {
        vi.setSystemTime(t0 + later);
        expect(
          (await call("POST", `/v2/payments/${made[i]!.id}/events/`, { body: { event_code: "PU15", description: "note" }, headers: processor.headers })).status,
        ).toBe(201);
      }
      vi.useRealTimers();
      const all = (await call("GET", "/v2/payments/?ordering=updated&page_size=1000", { headers: client.headers })).json.results as {
        id: string;
        created: string;
        updated: string;
      }[];
      expect(all).toHaveLength(5);
      const instants = [...new Set(all.flatMap((row) => [row.created, row.updated]))];
      for (const instant of instants) {
        for (const [op, keep] of [
          ["gt", (u: string) => u > instant],
          ["gte", (u: string) => u >= instant],
          ["lt", (u: string) => u < instant],
          ["lte", (u: string) => u <= instant],
        ] as const) {
          const filter = `ordering=updated&updated__${op}=${instant}`;
          const expected = all.filter((row) => keep(row.updated)).map((row) => row.id);
          const res = await call("GET", `/v2/payments/?${filter}&page_size=1000`, { headers: client.headers });
          expect(res.json.count, filter).toBe(expected.length);
          expect(
            res.json.results.map((row: { id: string }) => row.id),
            filter,
          ).toEqual(expected);
        }
      }
      // page=N by updated finds each page through the buckets, as following next links does.
      for (let page = 1; page <= 5; page++) {
        const res = await call("GET", `/v2/payments/?ordering=updated&page_size=1&page=${page}`, { headers: client.headers });
        expect(
          res.json.results.map((row: { id: string }) => row.id),
          `page ${page}`,
        ).toEqual([all[page - 1]!.id]);
        expect(res.json.count).toBe(5);
      }
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("a status with a created range, counted from its column of the created buckets", () => {
  it.each([
    [{ status: ["pending"] }, "pending"],
    [{ status: ["pending"], created__gte: at("2026-01-01") }, "pending"],
    [{ status: ["settled"], created__gt: at("2026-01-01"), created__lt: at("2026-02-01"), ordering: "updated" }, "settled"],
    [{ status: ["pending", "settled"], created__gte: at("2026-01-01") }, undefined],
    [{ status: ["pending"], updated__gte: at("2026-01-01") }, undefined],
    [{ status: ["pending"], created__gte: at("2026-01-01"), receiving_counterparty_id: ["cpty_x"] }, undefined],
    [{ created__gte: at("2026-01-01") }, undefined],
  ] as const)("%j -> %s", (filters, status) => {
    expect(oneStatusWithCreated(filters)).toBe(status);
  });

  it("follows payments as their status moves, at every edge of the range", async () => {
    const { client, processor } = await makeTenant();
    const parties = { buyer: await makeCounterparty(client, "buyer"), supplier: await makeCounterparty(client, "supplier") };
    const made: { id: string; created: string }[] = [];
    for (let i = 0; i < 6; i++) made.push((await makePayment(client, parties)).payment);
    const move = (id: string, status: string, code: string) =>
      call("POST", `/v2/payments/${id}/events/`, { body: { event_code: code, description: status, status }, headers: processor.headers });
    for (const payment of made.slice(1, 4)) expect((await move(payment.id, "in-progress", "PU10")).status).toBe(201);
    expect((await move(made[2]!.id, "settled", "PU20")).status).toBe(201);
    expect((await move(made[5]!.id, "canceled", "PU80")).status).toBe(201);
    const expected = (status: string, keep: (created: string) => boolean) =>
      made
        .filter((payment) => keep(payment.created))
        .filter(
          (payment) =>
            ({ [made[1]!.id]: "in-progress", [made[2]!.id]: "settled", [made[3]!.id]: "in-progress", [made[5]!.id]: "canceled" })[payment.id] === status ||
            (status === "pending" && [made[0]!.id, made[4]!.id].includes(payment.id)),
        ).length;
    for (const status of ["pending", "in-progress", "settled", "canceled", "failed"]) {
      for (const payment of made) {
        for (const [op, keep] of [
          ["gte", (c: string) => c >= payment.created],
          ["gt", (c: string) => c > payment.created],
          ["lt", (c: string) => c < payment.created],
          ["lte", (c: string) => c <= payment.created],
        ] as const) {
          const filter = `status=${status}&created__${op}=${payment.created}`;
          const res = await call("GET", `/v2/payments/?${filter}&page_size=1000`, { headers: client.headers });
          expect(res.json.count, filter).toBe(expected(status, keep));
          expect(res.json.results, filter).toHaveLength(res.json.count);
        }
      }
    }
  });
});

describe("page=N found through the time buckets", () => {
  it("gives the same rows as following next links, for every page, with and without bounds", async () => {
    const { account, client } = await makeTenant();
    const buyer = await makeCounterparty(client, "buyer");
    const supplier = await makeCounterparty(client, "supplier");
    // Several rows in one millisecond, one second, one minute, and across days and months.
    const instants = [
      ...Array(3).fill("2026-02-01T10:00:00.005Z"),
      "2026-02-01T10:00:00.900Z",
      "2026-02-01T10:00:59.000Z",
      "2026-02-01T23:59:59.999Z",
      "2026-02-02T00:00:00.000Z",
      "2026-03-15T08:00:00.000Z",
      "2026-03-15T08:00:00.001Z",
      "2026-05-20T12:34:56.789Z",
      "2026-05-20T12:34:56.789Z",
    ];
    for (const iso of instants) await insertInvoiceAt(account.id, buyer.id, supplier.id, iso);
    for (const filter of ["", "created__gte=2026-02-01T10:00:00.9Z&", "created__lt=2026-05-20T12:34:56.789Z&"]) {
      const all: string[] = [];
      let res = await call("GET", `/v1/invoices/?${filter}page_size=2`, { headers: client.headers });
      for (;;) {
        all.push(...res.json.results.map((row: { id: string }) => row.id));
        if (!res.json.next) break;
        res = await call("GET", res.json.next.slice("https://payments.test".length), { headers: client.headers });
      }
      const pages = Math.ceil(all.length / 2);
      for (let page = 1; page <= pages; page++) {
        const byOffset = await call("GET", `/v1/invoices/?${filter}page_size=2&page=${page}`, { headers: client.headers });
        expect(
          byOffset.json.results.map((row: { id: string }) => row.id),
          `${filter} page ${page}`,
        ).toEqual(all.slice((page - 1) * 2, page * 2));
      }
      expect((await call("GET", `/v1/invoices/?${filter}page_size=2&page=${pages + 1}`, { headers: client.headers })).status).toBe(404);
    }
  });

  it("pages payments by updated, as pollers read them", async () => {
    const { client, processor } = await makeTenant();
    const parties = { buyer: await makeCounterparty(client, "buyer"), supplier: await makeCounterparty(client, "supplier") };
    const made: { id: string }[] = [];
    for (let i = 0; i < 5; i++) made.push((await makePayment(client, parties)).payment);
    for (const payment of [made[1]!, made[3]!]) {
      await call("POST", `/v2/payments/${payment.id}/events/`, { body: { event_code: "PU15", description: "note" }, headers: processor.headers });
    }
    const expected = [0, 2, 4, 1, 3].map((i) => made[i]!.id);
    for (let page = 1; page <= 3; page++) {
      const res = await call("GET", `/v2/payments/?ordering=updated&page_size=2&page=${page}`, { headers: client.headers });
      expect(res.json.results.map((row: { id: string }) => row.id)).toEqual(expected.slice((page - 1) * 2, page * 2));
    }
  });
  it("pages one status's payments by created through that status's buckets", async () => {
    const { client, processor } = await makeTenant();
    const parties = { buyer: await makeCounterparty(client, "buyer"), supplier: await makeCounterparty(client, "supplier") };
    const made: { id: string; created: string }[] = [];
    for (let i = 0; i < 7; i++) made.push((await makePayment(client, parties)).payment);
    for (const i of [1, 4]) {
      await call("POST", `/v2/payments/${made[i]!.id}/events/`, {
        body: { event_code: "PU10", description: "go", status: "in-progress" },
        headers: processor.headers,
      });
    }
    const pending = [0, 2, 3, 5, 6].map((i) => made[i]!.id);
    for (const [filter, expected] of [
      ["status=pending", pending],
      [`status=pending&created__gt=${made[2]!.created}`, pending.slice(2)],
      ["status=in-progress", [made[1]!.id, made[4]!.id]],
    ] as const) {
      for (let page = 1; page <= Math.ceil(expected.length / 2); page++) {
        const res = await call("GET", `/v2/payments/?${filter}&page_size=2&page=${page}`, { headers: client.headers });
        expect(res.json.count, filter).toBe(expected.length);
        expect(
          res.json.results.map((row: { id: string }) => row.id),
          `${filter} page ${page}`,
        ).toEqual(expected.slice((page - 1) * 2, page * 2));
      }
    }
  });
});
