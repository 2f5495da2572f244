import { describe, expect, it } from "vitest";
import { call, ids, makeCounterparty, makeTenant } from "./helpers/api";

describe("counterparties", () => {
  it("creates one and shows it", async () => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/counterparties/", { body: { internal_id: "B-1", type: "buyer", name: "Acme" }, headers: client.headers });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^cpty_[A-Za-z0-9_-]{16,}$/),
      internal_id: "B-1",
      type: "buyer",
      name: "Acme",
      created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated: res.json.created,
    });
    const detail = await call("GET", `/v1/counterparties/${res.json.id}/`, { headers: client.headers });
    expect(detail.json).toEqual(res.json);
    const noSlash = await call("GET", `/v1/counterparties/${res.json.id}`, { headers: client.headers });
    expect(noSlash.json).toEqual(res.json);
  });

  it("answers 409 when internal_id and type clash, and allows the same internal_id for the other type", async () => {
    const { client } = await makeTenant();
    await makeCounterparty(client, "buyer", { internal_id: "X-1" });
    const clash = await call("POST", "/v1/counterparties/", { body: { internal_id: "X-1", type: "buyer", name: "Again" }, headers: client.headers });
    expect(clash.status).toBe(409);
    expect(clash.json).toEqual({ detail: expect.any(String) });
    const other = await call("POST", "/v1/counterparties/", { body: { internal_id: "X-1", type: "supplier", name: "Fine" }, headers: client.headers });
    expect(other.status).toBe(201);
  });

  it("allows the same internal_id in another account", async () => {
    const [a, b] = [await makeTenant(), await makeTenant()];
    await makeCounterparty(a.client, "buyer", { internal_id: "SHARED" });
    expect((await call("POST", "/v1/counterparties/", { body: { internal_id: "SHARED", type: "buyer", name: "B" }, headers: b.client.headers })).status).toBe(
      201,
    );
  });

  it("patches name and internal_id, and 409s on a clash", async () => {
    const { client } = await makeTenant();
    const first = await makeCounterparty(client, "supplier", { internal_id: "S-1" });
    await makeCounterparty(client, "supplier", { internal_id: "S-2" });
    const res = await call("PATCH", `/v1/counterparties/${first.id}/`, { body: { name: "Renamed", internal_id: "S-9" }, headers: client.headers });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ name: "Renamed", internal_id: "S-9", type: "supplier", created: first.created });
    expect(Date.parse(res.json.updated)).toBeGreaterThanOrEqual(Date.parse(first.updated));
    const clash = await call("PATCH", `/v1/counterparties/${first.id}/`, { body: { internal_id: "S-2" }, headers: client.headers });
    expect(clash.status).toBe(409);
    const after = await call("GET", `/v1/counterparties/${first.id}/`, { headers: client.headers });
    expect(after.json.internal_id).toBe("S-9");
  });

  it.each([
    [{}, ["internal_id", "type", "name"]],
    [{ internal_id: "a", type: "vendor", name: "n" }, ["type"]],
    [{ internal_id: 5, type: "buyer", name: "n" }, ["internal_id"]],
    [{ internal_id: "a", type: "buyer", name: "" }, ["name"]],
    [{ internal_id: "a", type: "buyer", name: null }, ["name"]],
    [{ internal_id: "a".repeat(256), type: "buyer", name: "n" }, ["internal_id"]],
  ])("refuses %j naming %j", async (body, fields) => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/counterparties/", { body, headers: client.headers });
    expect(res.status).toBe(400);
    expect(Object.keys(res.json).sort()).toEqual([...fields].sort());
    for (const field of fields) expect(res.json[field]).toEqual([expect.any(String)]);
  });

  it("words errors as DRF does", async () => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/counterparties/", { body: { type: "vendor", name: "" }, headers: client.headers });
    expect(res.json).toEqual({
      internal_id: ["This field is required."],
      type: ['"vendor" is not a valid choice.'],
      name: ["This field may not be blank."],
    });
  });

  describe("list filters", () => {
    async function fixture() {
      const { client } = await makeTenant();
      const b1 = await makeCounterparty(client, "buyer", { internal_id: "B1" });
      const b2 = await makeCounterparty(client, "buyer", { internal_id: "B2" });
      const s1 = await makeCounterparty(client, "supplier", { internal_id: "S1" });
      const s2 = await makeCounterparty(client, "supplier", { internal_id: "B1" });
      return { client, b1, b2, s1, s2 };
    }
    const list = (client: { headers: Record<string, string> }, query: string) => call("GET", `/v1/counterparties/?${query}`, { headers: client.headers });

    it("lists all in created order", async () => {
      const { client, b1, b2, s1, s2 } = await fixture();
      const res = await list(client, "");
      expect(res.json).toMatchObject({ count: 4, next: null, previous: null });
      expect(ids(res)).toEqual([b1.id, b2.id, s1.id, s2.id]);
    });

    it("filters by type, by internal_id, repeated and combined", async () => {
      const { client, b1, b2, s1, s2 } = await fixture();
      expect(ids(await list(client, "type=supplier"))).toEqual([s1.id, s2.id]);
      expect(ids(await list(client, "type=supplier&type=buyer"))).toEqual([b1.id, b2.id, s1.id, s2.id]);
      expect(ids(await list(client, "internal_id=B1"))).toEqual([b1.id, s2.id]);
      expect(ids(await list(client, "internal_id=B1&internal_id=S1"))).toEqual([b1.id, s1.id, s2.id]);
      const both = await list(client, "internal_id=B1&type=buyer");
      expect(ids(both)).toEqual([b1.id]);
      expect(both.json.count).toBe(1);
      expect(ids(await list(client, "internal_id=nope"))).toEqual([]);
      expect(ids(await list(client, "unknown_param=1&type=buyer"))).toEqual([b1.id, b2.id]);
    });

    it("refuses a bad type naming the parameter", async () => {
      const { client } = await fixture();
      const res = await list(client, "type=foo");
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ type: ["Select a valid choice. foo is not one of the available choices."] });
      expect((await list(client, "type=buyer&type=foo")).json).toEqual({ type: ["Select a valid choice. foo is not one of the available choices."] });
    });
  });
});
