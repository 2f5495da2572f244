import { HEADER, KEY_TTL_MS, MESSAGES, REPLAYED_HEADER } from "./decision";

type Operation = { parameters?: unknown[]; responses?: Record<string, { description: string; headers?: Record<string, unknown>; content?: unknown }> };
type Document = { paths?: Record<string, Record<string, Operation>> };

const ERROR = { "application/json": { schema: { $ref: "#/components/schemas/Error" } } };

/**
 * Describes 9.1 on every POST of the API in the OpenAPI document: the optional `Idempotency-Key`
 * header, the replay header, and the 409 and 422 that keys add. Done on the generated document so
 * that no POST route can leave it out.
 */
export function withIdempotency<T>(document: T): T {
  for (const [path, operations] of Object.entries((document as Document).paths ?? {})) {
    const post = operations.post;
    if (!post || !/^\/v[12]\//.test(path)) continue;
    post.parameters = [
      ...(post.parameters ?? []),
      {
        in: "header",
        name: HEADER,
        required: false,
        description: `Makes the request safe to retry: 1 to 255 printable ASCII characters, kept per API user for ${KEY_TTL_MS / 3_600_000} hours. The first request with a key runs and its answer (a 2xx, or a 4xx other than 409 and 429) is stored; the same request again (method, path and body) gets that answer with \`${REPLAYED_HEADER}: true\` and runs nothing.`,
        schema: { type: "string", minLength: 1, maxLength: 255, example: "7f3c2a9e-create-payment-INV-1001" },
      },
    ];
    const responses = (post.responses ??= {});
    for (const [status, response] of Object.entries(responses)) {
      if (!status.startsWith("2")) continue;
      response.headers = {
        ...response.headers,
        [REPLAYED_HEADER]: {
          description: "`true` when this is the stored answer to an earlier request with the same Idempotency-Key.",
          schema: { type: "string", enum: ["true"] },
        },
      };
    }
    const inProgress = `\`${MESSAGES.inProgress}\``;
    responses["409"] = responses["409"]
      ? { ...responses["409"], description: `${responses["409"].description}; or ${inProgress}` }
      : { description: inProgress, content: ERROR };
    responses["422"] = { description: `\`${MESSAGES.mismatch}\``, content: ERROR };
  }
  return document;
}
