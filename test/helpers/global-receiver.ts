import type { TestProject } from "vitest/node";
// @ts-expect-error plain JS module shared with `npm run receiver`
import { startReceiver } from "../../tools/receiver/index.mjs";

/** Starts the webhook receiver on 127.0.0.1 (Node side) for the tests in the Workers runtime. */
export default async function setup(project: TestProject) {
  const receiver = await startReceiver({ quiet: true });
  project.provide("receiverUrl", receiver.url);
  return () => receiver.close();
}

declare module "vitest" {
  export interface ProvidedContext {
    receiverUrl: string;
  }
}
