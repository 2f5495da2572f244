import { BOOKMARK_HEADER, BOOKMARK_MESSAGES } from "../lib/bookmark";

type Operation = { parameters?: unknown[]; responses?: Record<string, { description: string; headers?: Record<string, unknown> }> };
type Document = { paths?: Record<string, Record<string, Operation>> };

const SCHEMA = { type: "string", maxLength: 220, example: "b1.A.00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf891683.3f9a0c12.q8kVh1mW0vXo3HcZqJ1y8A" };

/**
 * Describes `Payments-Bookmark` (docs/interface.md, "Read replicas") on every operation of the API
 * in the OpenAPI document: the optional request header, the header on each answer, and the 400 of
 * a bookmark refused. Done on the generated document so that no route can leave it out.
 */
export function withBookmarks<T>(document: T): T {
  for (const [path, operations] of Object.entries((document as Document).paths ?? {})) {
    if (!/^\/v[12]\//.test(path)) continue;
    for (const operation of Object.values(operations)) {
      operation.parameters = [
        ...(operation.parameters ?? []),
        {
          in: "header",
          name: BOOKMARK_HEADER,
          required: false,
          description: `The \`${BOOKMARK_HEADER}\` of an earlier answer: this request reads a state at least that new (its own writes, even from a read replica). Without it a read may come from a replica slightly behind. The typed client and the CLI send it by themselves.`,
          schema: SCHEMA,
        },
      ];
      const responses = (operation.responses ??= {});
      for (const [status, response] of Object.entries(responses)) {
        if (status.startsWith("2"))
          response.headers = {
            ...response.headers,
            [BOOKMARK_HEADER]: { description: "What this answer read or wrote: send it back on the next request to read at least this state.", schema: SCHEMA },
          };
      }
      if (responses["400"])
        responses["400"].description =
          `${responses["400"].description}; or a \`${BOOKMARK_HEADER}\` refused: \`${BOOKMARK_MESSAGES.malformed}\` or \`${BOOKMARK_MESSAGES.foreign}\``;
    }
  }
  return document;
}
