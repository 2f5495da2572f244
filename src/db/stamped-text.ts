import { sql, type SQL } from "drizzle-orm";
import { toIso } from "../lib/time";

/**
 * Text that carries a stamp taken inside a D1 batch (a payment's `updated`, in its stored detail):
 * rendered once in JS with a placeholder stamp, which SQL replaces with
 * the real one when the row is written.
 */

/**
 * A far-future placeholder stamp, with each text rendered with it. Its text appears in the texts
 * only where the stamp goes: the texts made with it and with a second one differ exactly there,
 * so no other text (a description, say) can be mistaken for it. `textOf` is how a stamp reads in
 * text `index`.
 */
export function placeholderStamp(
  render: (stamp: number) => string[],
  textOf: (stamp: number, index: number) => string,
): { stamp: number; texts: string[] } {
  const random = () => Date.UTC(5000, 0, 1) + Math.floor(Math.random() * 100_000_000_000_000);
  for (let tries = 0; tries < 8; tries++) {
    const [first, second] = [random(), random()];
    const [texts, others] = [render(first), render(second)];
    if (texts.every((text, i) => text.replaceAll(textOf(first, i), textOf(second, i)) === others[i])) return { stamp: first, texts };
  }
  throw new Error("no placeholder stamp fits this text");
}

/** An integer-ms SQL expression as ISO 8601 text, as `Date.toISOString` writes it. */
export function isoSql(ms: SQL): SQL {
  return sql`strftime('%Y-%m-%dT%H:%M:%S', (${ms}) / 1000, 'unixepoch') || '.' || printf('%03d', (${ms}) % 1000) || 'Z'`;
}

/** `text` with every `placeholder` replaced by `stamp`, in SQL (each a value, or SQL for one). */
export function replacedSql(text: string | SQL, placeholder: string | SQL, stamp: SQL): SQL {
  return sql`replace(${text}, ${placeholder}, ${stamp})`;
}

/** The JSON of `render(stamp)`, as SQL that puts in the batch's stamp (ms) as ISO 8601 text. */
export function stampedJson(render: (stamp: number) => unknown, stamp: SQL): SQL {
  const { stamp: placeholder, texts } = placeholderStamp((ms) => [JSON.stringify(render(ms))], toIso);
  return replacedSql(texts[0]!, toIso(placeholder), isoSql(stamp));
}
