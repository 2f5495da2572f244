import { describe, expect, it } from "vitest";
import { apiPath } from "../../console/src/paths";

describe("the console's API paths", () => {
  it.each([
    ["3f1c", "/v1/webhooks/3f1c/"],
    ["a/b", "/v1/webhooks/a%2Fb/"],
    ["../v2/payments", "/v1/webhooks/..%2Fv2%2Fpayments/"],
    ["x?page_size=1", "/v1/webhooks/x%3Fpage_size%3D1/"],
    ["x#y", "/v1/webhooks/x%23y/"],
  ])("put %j in as one segment", (id, path) => {
    expect(apiPath`/v1/webhooks/${id}/`).toBe(path);
    // However it is written, the browser resolves it to that same path: nothing climbs out.
    expect(new URL(apiPath`/v1/webhooks/${id}/`, "https://console.test").pathname).toBe(path);
  });

  it.each(["..", ".", "", "%2e%2e", "%2E."])("refuse %j, which a browser would read as a dot segment or nothing", (id) => {
    expect(() => apiPath`/v1/webhooks/${id}/deliveries/`).toThrow();
  });
});
