import { describe, expect, it } from "vitest";
import snapshot from "../../packages/client/openapi.json";
import { call } from "../helpers/api";

describe("packages/client/openapi.json", () => {
  it("is the document the service serves (else run `npm run client:generate`)", async () => {
    const { servers, ...served } = (await call("GET", "/openapi.json")).json;
    expect(servers).toEqual([{ url: "https://payments.test" }]);
    expect(served).toEqual(snapshot);
  });
});
