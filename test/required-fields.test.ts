import { describe, expect, it } from "vitest";
import { ADMIN, call, makePayment, makeTenant } from "./helpers/api";
import { subscribeToReceiver } from "./helpers/webhooks";

// Every write body of the OpenAPI document (generated from the schemas that validate requests),
// each field missing, null and blank: DRF's words, never a message about "undefined".
type Schema = {
  type?: string | string[];
  enum?: unknown[];
  $ref?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  nullable?: boolean;
};
type Operation = { requestBody?: { content: Record<string, { schema: Schema }> } };

const tenant = await makeTenant();
const { payment, buyer } = await makePayment(tenant.client);
const { subscription } = await subscribeToReceiver(tenant.client);
const document = (await call("GET", "/openapi.json")).json as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

const resolve = (schema: Schema): Schema => (schema.$ref ? document.components.schemas[schema.$ref.split("/").pop()!]! : schema);
const types = (schema: Schema): string[] => {
  const resolved = resolve(schema);
  if (resolved.anyOf) return resolved.anyOf.flatMap(types);
  return ([] as string[]).concat(resolved.type ?? []);
};

function concretePath(template: string): string {
  const ids: Record<string, string> = {
    "/v1/counterparties/{id}": buyer.id,
    "/v2/payments/{id}": payment.id,
    "/v1/webhooks/{id}": subscription.id,
  };
  let path = template;
  for (const [prefix, id] of Object.entries(ids)) if (path.startsWith(prefix)) path = path.replace("{id}", id);
  return path.replace("{account_id}", tenant.account.id).replace("{username}", tenant.client.username).replace("{name}", "A");
}

/** DRF's message for a blank value of this field. */
function blankMessage(schema: Schema): string {
  const resolved = resolve(schema);
  if (resolved.enum) return '"" is not a valid choice.';
  const [type] = types(schema).filter((t) => t !== "null");
  return {
    string: "This field may not be blank.",
    boolean: "Must be a valid boolean.",
    integer: "A valid integer is required.",
    number: "A valid number is required.",
    array: "Expected a list of items.",
    object: "Invalid data. Expected a dictionary, but got str.",
  }[type!]!;
}

const cases = Object.entries(document.paths).flatMap(([template, operations]) =>
  Object.entries(operations).flatMap(([method, operation]) => {
    const schema = operation.requestBody?.content["application/json"]?.schema;
    if (!schema) return [];
    const body = resolve(schema);
    return Object.entries(body.properties ?? {}).map(([field, fieldSchema]) => ({
      label: `${method.toUpperCase()} ${template} ${field}`,
      method: method.toUpperCase(),
      path: concretePath(template),
      field,
      required: (body.required ?? []).includes(field),
      nullable: types(fieldSchema).includes("null"),
      blank: blankMessage(fieldSchema),
    }));
  }),
);

const send = (method: string, path: string, body: Record<string, unknown>) =>
  call(method, path, { body, headers: path.startsWith("/admin") ? ADMIN : tenant.processor.headers });

describe("required, null and blank fields of every write body", () => {
  it("covers every write route of the document", () => {
    const routes = new Set(cases.map((c) => `${c.method} ${c.path.split("/")[1]}`));
    expect(routes).toEqual(new Set(["POST admin", "PATCH admin", "POST v1", "PATCH v1", "PUT v1", "POST v2"]));
    expect(cases.filter((c) => c.required).length).toBeGreaterThanOrEqual(15);
  });

  it.each(cases.filter((c) => c.required))("$label missing: This field is required.", async ({ method, path, field }) => {
    const res = await send(method, path, {});
    expect(res.status).toBe(400);
    expect(res.json[field]).toEqual(["This field is required."]);
  });

  it.each(cases.filter((c) => !c.nullable))("$label null: This field may not be null.", async ({ method, path, field }) => {
    const res = await send(method, path, { [field]: null });
    expect(res.status).toBe(400);
    expect(res.json[field]).toEqual(["This field may not be null."]);
  });

  it.each(cases)("$label blank", async ({ method, path, field, blank }) => {
    const res = await send(method, path, { [field]: "" });
    expect(res.status).toBe(400);
    expect(res.json[field]).toEqual([blank]);
  });
});
