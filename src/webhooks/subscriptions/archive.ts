/**
 * The delivery log's archive in R2 (the ARCHIVE bucket): where retention (upkeep/retention.ts)
 * writes the deliveries it removes, and the API's read of one day of it.
 */
import type { ServiceContext } from "../../context";
import { notFound } from "../../errors";
import { requireSubscription } from "./deliveries";

/** The UTC day (YYYY-MM-DD) of an instant. Pure. */
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Where a subscription's archived deliveries of one day are, in the ARCHIVE bucket: an object for
 * each step that removed some of them, named by the first of them in the log (`/{day}/{id}.ndjson.gz`;
 * a step cut short is done again by the next run over the same deliveries, under the same name).
 * Pure.
 */
export const archivePrefix = (accountId: string, subscriptionId: string, day: string) => `${subscriptionArchive(accountId, subscriptionId)}${day}`;
/** Where every archived day of a subscription is: the objects' keys are this, a day, a slash and a name. Pure. */
export const subscriptionArchive = (accountId: string, subscriptionId: string) => `deliveries/${accountId}/${subscriptionId}/`;
export const archiveKey = (accountId: string, subscriptionId: string, day: string, firstId: string) =>
  `${archivePrefix(accountId, subscriptionId, day)}/${firstId}.ndjson.gz`;

/**
 * The account's subscription's archived deliveries of one day, as one gzip NDJSON stream: every
 * object of that day in turn, each delivery once. Null when there are none.
 */
export async function archivedDay({ db, accountId, archive }: ServiceContext, subscriptionId: string, day: string): Promise<ReadableStream<Uint8Array>> {
  await requireSubscription(db, accountId, subscriptionId);
  if (!archive) throw notFound();
  const prefix = archivePrefix(accountId, subscriptionId, day);
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const listed = await archive.list({ prefix: `${prefix}/`, cursor });
    keys.push(...listed.objects.map((object) => object.key));
    cursor = listed.truncated ? listed.cursor : undefined;
  } while (cursor);
  if (keys.length === 0) throw notFound();
  return ndjsonOnce(archive, keys).pipeThrough(new CompressionStream("gzip"));
}

/** Bytes of lines a download's stream hands on at once, about. */
const CHUNK_BYTES = 64 * 1024;

/** The objects' lines one after another, each delivery's first line only, read a line at a time (archivedLines). */
function ndjsonOnce(archive: R2Bucket, keys: string[]): ReadableStream<Uint8Array> {
  const seen = new Set<string>();
  const encoder = new TextEncoder();
  async function* lines() {
    for (const key of keys) yield* archivedLines(archive, key);
  }
  const source = lines();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk = "";
      while (chunk.length < CHUNK_BYTES) {
        const { value: line, done } = await source.next();
        if (done) {
          if (chunk) controller.enqueue(encoder.encode(chunk));
          return controller.close();
        }
        const id = (JSON.parse(line) as { id: string }).id;
        if (seen.has(id)) continue;
        seen.add(id);
        chunk += `${line}\n`;
      }
      controller.enqueue(encoder.encode(chunk));
    },
  });
}

/** Each line of the archive object `key` (none when it is gone), one at a time through gzip: never the object whole in memory. */
export async function* archivedLines(archive: R2Bucket, key: string): AsyncGenerator<string> {
  const object = await archive.get(key);
  if (!object) return;
  const reader = object.body.pipeThrough(new DecompressionStream("gzip")).pipeThrough(new TextDecoderStream()).getReader();
  let rest = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    rest += value;
    for (let end = rest.indexOf("\n"); end >= 0; end = rest.indexOf("\n")) {
      const line = rest.slice(0, end);
      rest = rest.slice(end + 1);
      if (line.trim()) yield line;
    }
  }
  if (rest.trim()) yield rest;
}
