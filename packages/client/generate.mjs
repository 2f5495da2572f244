// The one way schema.d.ts is made from openapi.json (used by `npm run client:generate` and by the
// drift test): openapi-typescript with its default options, as a user generating a client would run it.
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";

export async function schemaTypes(document) {
  return COMMENT_HEADER + astToString(await openapiTS(structuredClone(document), { silent: true }));
}
