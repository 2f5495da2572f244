// `npm run client:generate`: the typed client's inputs, from the API as it is served. Starts the
// service in a fresh copy, saves its /openapi.json (without `servers`, which names the local port) as
// packages/client/openapi.json, and turns it into packages/client/src/schema.d.ts with openapi-typescript.
// CI fails when either file differs from what the service serves (test/client/).
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { freePort, freshCopy, startNpmStart } from "../lib/service.mjs";
import { schemaTypes } from "../../packages/client/generate.mjs";

const CLIENT = resolve(import.meta.dirname, "../../packages/client");
const copy = freshCopy();
try {
  const service = await startNpmStart(copy.dir, await freePort());
  try {
    const { servers, ...document } = await (await fetch(`${service.base}/openapi.json`)).json();
    const text = `${JSON.stringify(document, null, 2)}\n`;
    writeFileSync(join(CLIENT, "openapi.json"), text);
    writeFileSync(join(CLIENT, "src/schema.d.ts"), await schemaTypes(document));
    console.log(`Wrote packages/client/openapi.json and packages/client/src/schema.d.ts (${Object.keys(document.paths).length} paths).`);
  } finally {
    await service.stop();
  }
} finally {
  copy.remove();
}
