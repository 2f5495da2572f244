import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { decrypt, encrypt, keyId, toBase64 } from "../../src/lib/encryption";
import { ADMIN, call, makeTenant, type User } from "../helpers/api";
import { HOOK_USER } from "../helpers/webhooks";

const keyOf = (fill: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)));
const OLD = env.ENCRYPTION_KEY as string; // the key every other test seals with
const NEW = keyOf(41);
const WRONG = keyOf(42);
const idOf = async (key: string) => keyId(Uint8Array.from(atob(key), (ch) => ch.charCodeAt(0)));

/** A ciphertext as sealed before key ids: `v1.` + base64(IV || ciphertext+tag). */
async function sealedV1(key: string, text: string): Promise<string> {
  const raw = await crypto.subtle.importKey("raw", Uint8Array.from(atob(key), (ch) => ch.charCodeAt(0)), "AES-GCM", false, ["encrypt"]);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, raw, new TextEncoder().encode(text)));
  return `v1.${toBase64(new Uint8Array([...iv, ...sealed]))}`;
}

describe("ENCRYPTION_KEY with several keys", () => {
  it("seals with the first key, naming it, and opens with any listed key", async () => {
    const sealed = await encrypt(`${NEW},${OLD}`, "secret");
    expect(sealed.startsWith(`v2.${await idOf(NEW)}.`)).toBe(true);
    expect(await decrypt(`${NEW},${OLD}`, sealed)).toBe("secret");
    expect(await decrypt(`${OLD},${NEW}`, sealed)).toBe("secret");
    await expect(decrypt(OLD, sealed)).rejects.toThrow(/does not list/);
  });

  it("opens ciphertexts from before key ids with whichever listed key sealed them", async () => {
    const legacy = await sealedV1(OLD, "legacy secret");
    expect(await decrypt(`${NEW},${OLD}`, legacy)).toBe("legacy secret");
    await expect(decrypt(NEW, legacy)).rejects.toThrow();
  });
});

const subscribe = (user: User, key: string) =>
  call("POST", "/v1/webhooks/", { body: { event: "payment.changed", url: "https://hooks.example.com/payments", content_type: "application/json", ...HOOK_USER }, headers: user.headers, bindings: { ENCRYPTION_KEY: key } });
const read = (user: User, id: string, key: string) => call("GET", `/v1/webhooks/${id}/`, { headers: user.headers, bindings: { ENCRYPTION_KEY: key } });

async function resealAll(key: string) {
  let after: string | null = null;
  let resealed = 0;
  const unreadable: string[] = [];
  do {
    const res = await call("POST", `/admin/encryption/reseal${after ? `?after=${after}` : ""}`, { headers: ADMIN, bindings: { ENCRYPTION_KEY: key } });
    expect(res.status).toBe(200);
    resealed += res.json.resealed;
    unreadable.push(...res.json.unreadable.map((row: { id: string }) => row.id));
    after = res.json.next_after;
  } while (after);
  return { resealed, unreadable };
}

describe("rotating ENCRYPTION_KEY", () => {
  it("keeps every subscription through NEW,OLD, a re-seal, and NEW alone", async () => {
    const { client } = await makeTenant();
    const created = (await subscribe(client, OLD)).json;
    const rotating = `${NEW},${OLD}`;
    expect((await read(client, created.id, rotating)).json).toMatchObject({ secrets_readable: true, secret: created.secret, password: HOOK_USER.password });

    const { resealed } = await resealAll(rotating);
    expect(resealed).toBeGreaterThanOrEqual(1);
    expect((await resealAll(rotating)).resealed).toBe(0); // nothing left to do
    const after = await read(client, created.id, NEW);
    expect(after.json).toMatchObject({ secrets_readable: true, secret: created.secret, username: HOOK_USER.username, password: HOOK_USER.password });
    const row = await env.DB.prepare("select credentials, secret from webhook_subscriptions where id = ?").bind(created.id).first<{ credentials: string; secret: string }>();
    expect(row!.secret.startsWith(`v2.${await idOf(NEW)}.`)).toBe(true);
    expect(JSON.stringify(row)).not.toContain(created.secret);
    expect(JSON.stringify(row)).not.toContain(HOOK_USER.password);
  });

  it("after a wrong key was deployed and the right one is back, reports the rows it sealed and answers the list; listing both opens every row", async () => {
    const { client } = await makeTenant();
    const good = (await subscribe(client, OLD)).json;
    const bad = (await subscribe(client, WRONG)).json; // sealed while the wrong key was deployed
    const list = await call("GET", "/v1/webhooks/", { headers: client.headers });
    expect(list.status).toBe(200);
    const readable = new Map(list.json.results.map((row: { id: string; secrets_readable: boolean }) => [row.id, row.secrets_readable]));
    expect([readable.get(good.id), readable.get(bad.id)]).toEqual([true, false]);
    expect((await read(client, bad.id, `${OLD},${WRONG}`)).json).toMatchObject({ secrets_readable: true, secret: bad.secret });
    const { unreadable } = await resealAll(OLD);
    expect(unreadable).toContain(bad.id);
    expect(unreadable).not.toContain(good.id);
  });
});
