import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { base64 } from "../../src/lib/crypto";
import { decrypt, encrypt, keyId } from "../../src/lib/encryption";
import { ADMIN, call, makePayment, makeTenant, type User, shardD1, shardOf } from "../helpers/api";
import { verify } from "../../packages/verify/index.js";
import { HOOK_USER } from "../helpers/webhooks";

const keyOf = (fill: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)));
const OLD = env.ENCRYPTION_KEY as string; // the key every other test seals with
const NEW = keyOf(41);
const WRONG = keyOf(42);
// Seals with OLD, and still fits once an earlier test re-sealed every stored row with NEW.
const SEAL_OLD = `${OLD},${NEW}`;
const idOf = async (key: string) => keyId(Uint8Array.from(atob(key), (ch) => ch.charCodeAt(0)));

/** A ciphertext as sealed before key ids: `v1.` + base64(IV || ciphertext+tag). */
async function sealedV1(key: string, text: string): Promise<string> {
  const raw = await crypto.subtle.importKey(
    "raw",
    Uint8Array.from(atob(key), (ch) => ch.charCodeAt(0)),
    "AES-GCM",
    false,
    ["encrypt"],
  );
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, raw, new TextEncoder().encode(text)));
  return `v1.${base64(new Uint8Array([...iv, ...sealed]))}`;
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
  call("POST", "/v1/webhooks/", {
    body: { event: "payment.changed", url: "https://hooks.example.com/payments", content_type: "application/json", ...HOOK_USER },
    headers: user.headers,
    bindings: { ENCRYPTION_KEY: key },
  });
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
    const row = await (
      await shardD1(client.accountId)
    )
      .prepare("select credentials, secret from webhook_subscriptions where id = ?")
      .bind(created.id)
      .first<{ credentials: string; secret: string }>();
    expect(row!.secret.startsWith(`v2.${await idOf(NEW)}.`)).toBe(true);
    expect(JSON.stringify(row)).not.toContain(created.secret);
    expect(JSON.stringify(row)).not.toContain(HOOK_USER.password);
  });

  it("re-seals an Ed25519 subscription's signing keys too: after NEW alone opens them, its deliveries still sign v1a with either pair", async () => {
    const { client } = await makeTenant();
    const created = (
      await call("POST", "/v1/webhooks/", {
        body: { event: "payment.changed", url: "https://hooks.example.com/payments", content_type: "application/json", signing: "ed25519", ...HOOK_USER },
        headers: client.headers,
        bindings: { ENCRYPTION_KEY: SEAL_OLD },
      })
    ).json;
    const rotated = (await call("POST", `/v1/webhooks/${created.id}/rotate-secret/`, { headers: client.headers, bindings: { ENCRYPTION_KEY: SEAL_OLD } })).json;
    await makePayment(client);
    await resealAll(`${NEW},${OLD}`);
    const row = await (
      await shardD1(client.accountId)
    )
      .prepare("select signing_key, previous_signing_key from webhook_subscriptions where id = ?")
      .bind(created.id)
      .first<{ signing_key: string; previous_signing_key: string }>();
    expect(row!.signing_key.startsWith(`v2.${await idOf(NEW)}.`)).toBe(true);
    expect(row!.previous_signing_key.startsWith(`v2.${await idOf(NEW)}.`)).toBe(true);
    const feed = await call("GET", `/v1/webhooks/${created.id}/feed/?signed=true`, { headers: client.headers, bindings: { ENCRYPTION_KEY: NEW } });
    const [item] = feed.json.results;
    expect(item.headers["webhook-signature"].split(" ")).toHaveLength(2);
    for (const publicKey of [created.public_key, rotated.public_key]) {
      expect(await verify({ body: item.body, headers: item.headers, secrets: [publicKey] })).toEqual({ ok: true, reason: null });
    }
  });

  it("leaves nothing under the old key when a change races it, even one made by an isolate that still has only the old key", async () => {
    const { client } = await makeTenant();
    const created = (await subscribe(client, SEAL_OLD)).json;
    const rotating = `${NEW},${OLD}`;
    let rotated: { secret: string } | undefined;
    // Between the re-seal's read of the row and its write, an isolate deployed before the new key
    // rotates the signing secret: it seals with OLD, and the re-seal's guarded write finds the row changed.
    const shard = `SHARD_${await shardOf(client.accountId)}` as const;
    const wrapped = beforeFirstUpdate(env[shard]!, /^update "webhook_subscriptions"/, async () => {
      const res = await call("POST", `/v1/webhooks/${created.id}/rotate-secret/`, { headers: client.headers, bindings: { ENCRYPTION_KEY: SEAL_OLD } });
      expect(res.status).toBe(200);
      rotated = res.json;
    });
    let after: string | null = null;
    do {
      const res = await call("POST", `/admin/encryption/reseal${after ? `?after=${after}` : ""}`, {
        headers: ADMIN,
        bindings: { ENCRYPTION_KEY: rotating, ...({ [shard]: wrapped } as Partial<typeof env>) },
      });
      after = res.json.next_after;
    } while (after);
    expect(rotated).toBeDefined();
    const row = await wrapped
      .prepare("select credentials, secret, previous_secret from webhook_subscriptions where id = ?")
      .bind(created.id)
      .first<Record<string, string>>();
    const newest = `v2.${await idOf(NEW)}.`;
    expect([row!.credentials!.startsWith(newest), row!.secret!.startsWith(newest), row!.previous_secret!.startsWith(newest)]).toEqual([true, true, true]);
    // With the old key dropped, the subscription still opens: the rotated secret and the one before it.
    expect((await read(client, created.id, NEW)).json).toMatchObject({ secrets_readable: true, secret: rotated!.secret, password: HOOK_USER.password });
  });

  it.each([
    ["PATCH", (id: string) => [`/v1/webhooks/${id}/`, { username: "renamed" }]],
    ["rotate-secret", (id: string) => [`/v1/webhooks/${id}/rotate-secret/`, undefined]],
  ] as const)("a %s seals every secret of the row with the newest key", async (_, request) => {
    const { client } = await makeTenant();
    const created = (await subscribe(client, SEAL_OLD)).json;
    const [path, body] = request(created.id) as [string, Record<string, string> | undefined];
    const res = await call(body ? "PATCH" : "POST", path, { headers: client.headers, body, bindings: { ENCRYPTION_KEY: `${NEW},${OLD}` } });
    expect(res.status).toBe(200);
    const row = await (
      await shardD1(client.accountId)
    )
      .prepare("select credentials, secret, previous_secret from webhook_subscriptions where id = ?")
      .bind(created.id)
      .first<Record<string, string | null>>();
    const newest = `v2.${await idOf(NEW)}.`;
    for (const sealed of Object.values(row!)) if (sealed !== null) expect(sealed.startsWith(newest)).toBe(true);
  });

  it("refuses to seal with a key that opens none of the stored subscriptions: 500, a config_error line, nothing written", async () => {
    const { client } = await makeTenant();
    const made = (await subscribe(client, SEAL_OLD)).json;
    const logged: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" ")));
    const shard = await shardD1(client.accountId);
    const before = await shard.prepare("select count(*) as n from webhook_subscriptions").first<{ n: number }>();
    const refused = await subscribe(client, WRONG);
    const patched = await call("PATCH", `/v1/webhooks/${made.id}/`, {
      headers: client.headers,
      body: { url: "https://hooks.example.com/other" },
      bindings: { ENCRYPTION_KEY: `${WRONG},${OLD}` },
    });
    spy.mockRestore();
    expect(refused.status).toBe(500);
    expect(refused.json).toEqual({ detail: "Service is not configured." });
    expect(logged.some((line) => line.includes('"config_error"') && line.includes("ENCRYPTION_KEY lists no key"))).toBe(true);
    expect(await shard.prepare("select count(*) as n from webhook_subscriptions").first<{ n: number }>()).toEqual(before);
    // A new key listed before the right one is a rotation, not a wrong key.
    expect(patched.status).toBe(200);
  });

  it("after a wrong key was deployed and the right one is back, reports the rows it sealed and answers the list; listing both opens every row", async () => {
    const { client } = await makeTenant();
    const good = (await subscribe(client, SEAL_OLD)).json;
    // Sealed with the wrong key (as a deployment from before the key check could have).
    const bad = (await subscribe(client, SEAL_OLD)).json;
    const [credentials, secret] = [await encrypt(WRONG, JSON.stringify([HOOK_USER.username, HOOK_USER.password])), await encrypt(WRONG, bad.secret)];
    await (
      await shardD1(client.accountId)
    )
      .prepare("update webhook_subscriptions set credentials = ?, secret = ? where id = ?")
      .bind(credentials, secret, bad.id)
      .run();
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

/** A D1 binding that runs `before` once, ahead of the first statement whose SQL matches `pattern`. */
function beforeFirstUpdate(d1: D1Database, pattern: RegExp, before: () => Promise<unknown>): D1Database {
  let fired = false;
  const hook = async () => {
    if (fired) return;
    fired = true;
    await before();
  };
  const wrap = (sql: string, statement: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, name) {
        if (name === "bind") return (...values: unknown[]) => wrap(sql, target.bind(...values));
        const value = Reflect.get(target, name, target);
        if (typeof value !== "function") return value;
        if (!["all", "run", "raw", "first"].includes(String(name)) || !pattern.test(sql)) return value.bind(target);
        return async (...args: unknown[]) => {
          await hook();
          return value.apply(target, args);
        };
      },
    });
  const proxy: D1Database = new Proxy(d1, {
    get(target, name) {
      if (name === "prepare") return (sql: string) => wrap(sql, target.prepare(sql));
      // A request's session is this binding itself (locally every query is the primary's).
      if (name === "withSession") return () => proxy;
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return proxy;
}
