import { env } from "cloudflare:test";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN, call, makePayment, makeTenant, type User } from "./helpers/api";
import { subscribeToReceiver } from "./helpers/webhooks";

/**
 * Random requests for every operation of the OpenAPI document, as each kind of caller: never a
 * 5xx, and every error in the contract's shape. FUZZ_RUNS sets the number of cases (CI: a few
 * hundred; `FUZZ_RUNS=10000 npx vitest run test/fuzz.test.ts` for a long run).
 */
const RUNS = Number(env.FUZZ_RUNS ?? "300");

interface Operation {
  method: string;
  path: string;
  query: string[];
  fields: string[];
}

let operations: Operation[] = [];
let callers: Record<string, Record<string, string>> = {};
let ids: string[] = [];

beforeAll(async () => {
  const doc = (await call("GET", "/openapi.json")).json;
  const schemaOf = (ref: { $ref?: string; properties?: object } | undefined): { properties?: object } | undefined =>
    ref?.$ref ? doc.components.schemas[ref.$ref.split("/").pop()!] : ref;
  operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        query: (op.parameters ?? []).filter((p: { in: string }) => p.in === "query").map((p: { name: string }) => p.name),
        fields: Object.keys(schemaOf(op.requestBody?.content?.["application/json"]?.schema)?.properties ?? {}),
      })),
  );
  const mine = await makeTenant();
  const theirs = await makeTenant();
  const made = await makePayment(mine.client);
  const other = await makePayment(theirs.client);
  const hook = await subscribeToReceiver(mine.client);
  ids = [
    made.payment.id,
    made.invoice.id,
    made.buyer.id,
    hook.subscription.id,
    other.payment.id,
    other.invoice.id,
    mine.client.username,
    mine.client.accountId,
  ];
  const basic = (user: User) => user.headers;
  callers = {
    client: basic(mine.client),
    processor: basic(mine.processor),
    stranger: basic(theirs.client),
    nobody: {},
    wrongPassword: { authorization: `Basic ${btoa(`${mine.client.username}:wrong`)}` },
    admin: ADMIN,
  };
});

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    "",
    "0",
    "-1",
    "1e309",
    "true",
    "null",
    "2026-01-01",
    "2026-13-45T99:99:99Z",
    "%",
    "%00",
    "..",
    "a".repeat(300),
    "😀",
    "pending",
    "buyer",
    "application/json",
  ),
);
const jsonValue = fc.oneof(
  text,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(text, { maxLength: 3 }),
  fc.dictionary(text, text, { maxKeys: 2 }),
);

describe("fuzzing every operation", () => {
  it("never answers 5xx, and every error has the contract's shape", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.constantFrom("client", "processor", "stranger", "nobody", "wrongPassword", "admin"),
        fc.array(fc.oneof(fc.constantFrom(...ids.map((id) => id)), text), { minLength: 3, maxLength: 3 }),
        fc.array(fc.tuple(fc.oneof(fc.constant(null), text), text), { maxLength: 5 }),
        fc.oneof(fc.dictionary(fc.oneof(fc.constant("__field__"), text), jsonValue, { maxKeys: 6 }), fc.string({ maxLength: 60 }), fc.constant(undefined)),
        fc.constantFrom(undefined, "application/json", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-8", "garbage"),
        // Idempotency keys: none, a few shared ones (so that replays and mismatches happen), or junk.
        fc.oneof(
          fc.constant(undefined),
          fc.constantFrom("k1", "k2", " ", "x".repeat(256)),
          fc.string({ maxLength: 10 }).map((key) => key.replace(/[^\x20-\x7e]/g, "?")),
        ),
        async (pick, role, params, query, body, contentType, key) => {
          const op = operations[pick % operations.length]!;
          let n = 0;
          const path = op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(params[n++ % params.length]!));
          const search = new URLSearchParams();
          for (const [name, value] of query) search.append(name ?? op.query[value.length % Math.max(op.query.length, 1)] ?? "page", value);
          // Bodies use the operation's own field names for some keys.
          const sent =
            body && typeof body === "object"
              ? Object.fromEntries(
                  Object.entries(body).map(([key, value], i) => [key === "__field__" ? (op.fields[i % Math.max(op.fields.length, 1)] ?? key) : key, value]),
                )
              : body;
          const headers = {
            ...callers[role],
            ...(contentType ? { "content-type": contentType } : {}),
            ...(key !== undefined ? { "idempotency-key": key } : {}),
          };
          const res = await call(op.method, `${path}?${search}`, { body: op.method === "GET" ? undefined : sent, headers, bindings: { RATE_LIMITING: "off" } });
          const where = `${op.method} ${path}?${search} as ${role}: ${res.status} ${JSON.stringify(res.json)?.slice(0, 300)}`;
          expect(res.status, where).toBeLessThan(500);
          if (res.status >= 400) {
            const shaped =
              res.json !== null &&
              typeof res.json === "object" &&
              ((Object.keys(res.json).length === 1 && typeof res.json.detail === "string") ||
                (Object.keys(res.json).length > 0 &&
                  Object.values(res.json).every((messages) => Array.isArray(messages) && messages.length > 0 && messages.every((m) => typeof m === "string"))));
            expect(shaped, where).toBe(true);
          }
        },
      ),
      { numRuns: RUNS },
    );
  }, 600_000);
});
