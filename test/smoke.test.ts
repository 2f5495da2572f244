import { describe, expect, it } from "vitest";
import { call, makePayment, makeTenant } from "./helpers/api";

describe("smoke", () => {
  it("creates a payment", async () => {
    const { client } = await makeTenant();
    const { payment } = await makePayment(client);
    expect(payment.status).toBe("pending");
    const res = await call("GET", "/v2/payments/", { headers: client.headers });
    expect(res.status).toBe(200);
    expect(res.json.count).toBe(1);
  });
});
