import { describe, expect, it } from "vitest";
import { call, makePayment, makeTenant } from "./helpers/api";
import { HOOK_USER, subscribeToReceiver } from "./helpers/webhooks";

/**
 * Every operation of the OpenAPI document that names an object, called with another account's
 * ids, by each kind of caller: the answer is exactly the one for an id that does not exist (or
 * 401 without credentials), never a 2xx, and the other account's objects do not change.
 */
async function world() {
  const mine = await makeTenant();
  const theirs = await makeTenant();
  const made = await makePayment(theirs.client);
  const hook = await subscribeToReceiver(theirs.client, { payment_status: true });
  await makePayment(theirs.client, { buyer: made.buyer, supplier: made.supplier }); // a delivery for the subscription
  const deliveries = await call("GET", `/v1/webhooks/${hook.subscription.id}/deliveries/`, { headers: theirs.client.headers });
  const replay = await call("POST", `/v1/webhooks/${hook.subscription.id}/replay/`, {
    body: { since: new Date(Date.now() - 3_600_000).toISOString() },
    headers: theirs.client.headers,
  });
  const objects = {
    counterparties: made.buyer.id as string,
    invoices: made.invoice.id as string,
    payments: made.payment.id as string,
    webhooks: hook.subscription.id as string,
    deliveries: deliveries.json.results[0].id as string,
    replays: replay.json.id as string,
  };
  return { mine, theirs, objects };
}

/** The id a path parameter stands for, by the collection it follows. */
function idFor(path: string, param: string, objects: Record<string, string>): string {
  if (param === "delivery_id") return objects.deliveries!;
  if (param === "replay_id") return objects.replays!;
  const collection = /\/(counterparties|invoices|payments|webhooks)\/\{/.exec(path)![1]!;
  return objects[collection]!;
}

/** An id of the same form that names nothing. */
const missing = (id: string) => (/^[0-9a-f-]{36}$/.test(id) ? crypto.randomUUID() : `${id.slice(0, -6)}zzzzzz`);

/** Bodies that would be valid for the caller's own object, so that only the id decides. */
function bodiesFor(method: string, path: string): unknown[] {
  if (method === "GET" || method === "DELETE") return [undefined];
  if (path.includes("/events")) return [{}, { event_code: "PU90", description: "x", status: "canceled" }];
  if (path.startsWith("/v1/counterparties")) return [{}, { name: "hijacked" }];
  if (path.startsWith("/v1/webhooks") && !path.includes("deliveries") && !path.includes("rotate"))
    return [{}, { event: "payment.changed", url: "https://hooks.example.com/x", content_type: "application/json", ...HOOK_USER, is_active: false }];
  return [undefined, {}];
}

describe("the tenancy matrix, from the route table", () => {
  it("answers another account's ids exactly as ids that do not exist, for every operation and caller", async () => {
    const { mine, theirs, objects } = await world();
    const doc = (await call("GET", "/openapi.json")).json;
    const operations = Object.entries(doc.paths as Record<string, Record<string, { security?: unknown[] }>>)
      .filter(([path]) => path.includes("{") && !path.startsWith("/admin"))
      .flatMap(([path, item]) =>
        Object.keys(item)
          .filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))
          // An operation whose document asks no credentials (an ed25519 subscription's public keys) answers anyone alike.
          .map((m) => ({ method: m.toUpperCase(), path, open: item[m]!.security?.length === 0 })),
      );
    expect(operations.length).toBeGreaterThanOrEqual(12);

    const snapshot = () =>
      Promise.all(
        [
          `/v1/counterparties/${objects.counterparties}/`,
          `/v1/invoices/${objects.invoices}/`,
          `/v2/payments/${objects.payments}/`,
          `/v1/webhooks/${objects.webhooks}/`,
          `/v1/webhooks/${objects.webhooks}/deliveries/${objects.deliveries}/`,
          `/v1/webhooks/${objects.webhooks}/replays/${objects.replays}/`,
        ].map((path) => call("GET", path, { headers: theirs.client.headers }).then((res) => res.json)),
      );
    const before = await snapshot();
    const checked: string[] = [];
    for (const { method, path, open } of operations) {
      const fill = (id: (param: string) => string) => path.replace(/\{([^}]+)\}/g, (_, param: string) => encodeURIComponent(id(param)));
      const foreign = fill((param) => idFor(path, param, objects));
      const absent = fill((param) => missing(idFor(path, param, objects)));
      for (const body of bodiesFor(method, path)) {
        for (const [role, headers] of [
          ["client", mine.client.headers],
          ["processor", mine.processor.headers],
        ] as const) {
          const [theirsRes, absentRes] = [await call(method, foreign, { body, headers }), await call(method, absent, { body, headers })];
          const where = `${method} ${path} as ${role} with ${JSON.stringify(body)}`;
          expect(theirsRes.status, where).toBeGreaterThanOrEqual(400);
          expect({ status: theirsRes.status, json: theirsRes.json }, where).toEqual({ status: absentRes.status, json: absentRes.json });
          checked.push(where);
        }
        const anonymous = await call(method, foreign, { body });
        if (open) {
          const nobody = await call(method, absent, { body });
          expect({ status: anonymous.status, json: anonymous.json }, `${method} ${path} with no user`).toEqual({ status: nobody.status, json: nobody.json });
        } else expect(anonymous.status, `${method} ${path} with no user`).toBe(401);
      }
    }
    expect(await snapshot()).toEqual(before);
    expect(checked.length).toBeGreaterThanOrEqual(24);
  }, 120_000);
});
