/**
 * `GET /v1/webhooks/{id}/jwks/`: an `ed25519` subscription's public keys as a JWK Set, with no
 * credentials (docs/interface.md, "Key discovery"). Mounted ahead of authentication (app.ts): the
 * directory says which account, so which shard, publishes the subscription's keys.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { createDb } from "../../db/client";
import { shardBinding } from "../../db/shards";
import { sha256Hex } from "../../lib/crypto";
import { jwkSet, selectPublisher } from "../../webhooks";
import { createRouter, errorsOf } from "../common";
import { Params, tags } from "./shared";

/** How long a receiver may keep a JWK Set before asking again (it asks at once for a `kid` it lacks). */
export const JWKS_MAX_AGE_S = 300;
const NO_KEY_SET = "No subscription publishes keys here: the id is unknown, or the subscription signs with HMAC (`signing: hmac`).";

const Jwk = z
  .object({
    kty: z.literal("OKP"),
    crv: z.literal("Ed25519"),
    x: z.string().openapi({ description: "The 32-byte public key, base64url." }),
    kid: z.string().openapi({ description: "The key's RFC 7638 thumbprint (SHA-256, base64url): what `webhook-key-id` names." }),
    use: z.literal("sig"),
    alg: z.literal("EdDSA"),
  })
  .openapi("Jwk");
const JwkSet = z.object({ keys: z.array(Jwk) }).openapi("JwkSet");

export const jwksRouter = createRouter();

jwksRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}/jwks",
    operationId: "getWebhookJwks",
    summary: "An Ed25519 subscription's keys, as a JWK Set",
    description:
      "Needs no credentials: the id is unguessable and the keys are public. The current key and, during a rotation's 24 hours, the previous one. Cacheable for 5 minutes (`Cache-Control`), with an `ETag`: `If-None-Match` with it answers 304. A delivery's `webhook-key-id` names the `kid` of each `v1a` signature's key.",
    tags,
    security: [],
    request: { params: Params },
    responses: {
      200: { description: "The JWK Set", content: { "application/jwk-set+json": { schema: JwkSet } } },
      304: { description: "Not modified: the `ETag` sent in `If-None-Match` is still the set's" },
      ...errorsOf([404], { 404: NO_KEY_SET }),
    },
  }),
  async (c) => {
    const id = c.req.valid("param").id;
    const publisher = await selectPublisher(c.get("directory"), id).get();
    const binding = publisher && shardBinding(c.env, publisher.shard);
    if (!publisher || !binding) return c.json({ detail: NO_KEY_SET }, 404);
    // 404 with its reason for an `hmac` subscription, or one deleted since.
    const set = await jwkSet({ db: createDb(binding), accountId: publisher.accountId }, id);
    const body = JSON.stringify(set);
    const etag = `"${(await sha256Hex(body)).slice(0, 32)}"`;
    c.header("Cache-Control", `public, max-age=${JWKS_MAX_AGE_S}`);
    c.header("ETag", etag);
    const sent = c.req.header("if-none-match");
    if (sent && sent.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag || tag.trim() === "*")) return c.body(null, 304);
    return c.body(body, 200, { "Content-Type": "application/jwk-set+json" });
  },
);
