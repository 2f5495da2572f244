import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { hookHmac, newSigningSecret, secretKeyBytes, signatureHeaders, standardSignature } from "../../src/webhooks/wire/signing";

describe("signing", () => {
  it("matches the Standard Webhooks published example", async () => {
    // From the Standard Webhooks specification's example.
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const signature = await standardSignature([secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}');
    expect(signature).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("computes hook-hmac as RFC 4231 test case 2 does", async () => {
    // Key "Jefe", data "what do ya want for nothing?".
    const expected = btoa(String.fromCharCode(..."5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843".match(/../g)!.map((h) => parseInt(h, 16))));
    expect(await hookHmac(`whsec_${btoa("Jefe")}`, "what do ya want for nothing?")).toBe(expected);
  });

  it("is accepted by the standardwebhooks verifier", async () => {
    const secret = newSigningSecret();
    const body = JSON.stringify({ object_type: "payment", object_id: "pmt_x", event: "payment.changed" });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = await signatureHeaders({ current: secret, previous: null }, "2f1e3a7c-0b1d-4a8e-9c5f-1a2b3c4d5e6f", timestamp, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("signs with both secrets after a rotation, so either verifies", async () => {
    const [current, previous] = [newSigningSecret(), newSigningSecret()];
    const body = '{"a":1}';
    const headers = await signatureHeaders({ current, previous }, "id-1", Math.floor(Date.now() / 1000), body);
    expect(headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(() => new Webhook(current).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
  });

  // Two receivers through a rotation: one that has not acted on it (holds the old secret and checks
  // hook-hmac alone, as the published interface describes) and one that switched to the new secret
  // at once (checks hook-hmac or hook-hmac-next, as our README says). Both also run the published
  // Standard Webhooks verifier.
  const [oldSecret, newSecret] = [newSigningSecret(), newSigningSecret()];
  const receivers = {
    "has not acted": { secret: oldSecret, hmacHeaders: ["hook-hmac"] },
    switched: { secret: newSecret, hmacHeaders: ["hook-hmac", "hook-hmac-next"] },
  };
  const phases = {
    "before the rotation": { current: oldSecret, previous: null },
    "during its 24 hours": { current: newSecret, previous: oldSecret },
    "after its 24 hours": { current: newSecret, previous: null },
  };
  it.each([
    ["before the rotation", "has not acted", true],
    ["during its 24 hours", "has not acted", true],
    ["during its 24 hours", "switched", true],
    ["after its 24 hours", "has not acted", false],
    ["after its 24 hours", "switched", true],
  ] as const)("%s, a receiver that %s verifies: %s", async (phase, receiver, verifies) => {
    const body = '{"object_id":"pmt_1"}';
    const headers = await signatureHeaders(phases[phase], "id-3", Math.floor(Date.now() / 1000), body);
    const { secret, hmacHeaders } = receivers[receiver];
    const expected = await hookHmac(secret, body);
    const hmacOk = hmacHeaders.some((name) => headers[name] === expected);
    let standardOk = true;
    try {
      new Webhook(secret).verify(body, headers);
    } catch {
      standardOk = false;
    }
    expect({ hmacOk, standardOk }).toEqual({ hmacOk: verifies, standardOk: verifies });
    expect("hook-hmac-next" in headers).toBe(phase === "during its 24 hours");
  });

  it("rejects a changed body", async () => {
    const secret = newSigningSecret();
    const headers = await signatureHeaders({ current: secret, previous: null }, "id-2", Math.floor(Date.now() / 1000), '{"a":1}');
    expect(() => new Webhook(secret).verify('{"a":2}', headers)).toThrow();
  });

  it("makes secrets in Standard Webhooks form: whsec_ and 32 random bytes", () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretKeyBytes(secret)).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
  });
});
