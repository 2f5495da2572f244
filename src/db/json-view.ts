import { getTableColumns, getTableName, sql, type Column } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { toIso } from "../lib/time";

/** A field shown as ISO 8601 UTC with milliseconds, from an integer-milliseconds column. */
export type Iso<Key extends string> = { iso: Key };
export const iso = <Key extends string>(key: Key): Iso<Key> => ({ iso: key });

type Spec<Row> = Record<string, (keyof Row & string) | Iso<keyof Row & string>>;
type Shown<Row, S extends Spec<Row>> = { [Name in keyof S]: S[Name] extends Iso<string> ? string : S[Name] extends keyof Row ? Row[S[Name]] : never };

/** JSON text of a `View`, made by SQL or stored: sent as it is. */
export type JsonText<View> = string & { readonly view?: View };

/** The timestamp format of `toIso`, in SQLite: 'unixepoch' of a real rounds to the millisecond. */
const ISO_FORMAT = "%Y-%m-%dT%H:%M:%fZ";

/**
 * An object's view in the API, declared once over its table's row: each field of the view names
 * a text or integer field of the row, shown as it is, or a timestamp (`iso`). `of` makes the view
 * from a row; `json` makes the same view's JSON text in SQLite, so that a list page reads its
 * rows ready to send and the Worker neither maps nor serialises them one by one.
 */
export function jsonView<T extends SQLiteTable, S extends Spec<T["$inferSelect"]>>(table: T, spec: S) {
  type Row = T["$inferSelect"];
  const columns = getTableColumns(table) as Record<string, Column>;
  const fields = Object.entries(spec);
  // Written out once as text: names are code, never input, and a list builds no SQL per field.
  const ref = (key: string) => `"${getTableName(table)}"."${columns[key]!.name}"`;
  const pieces = fields.map(([name, field]) => {
    if (!/^[a-z_]+$/.test(name)) throw new Error(`a view field named ${name}`);
    return typeof field === "string" ? `'${name}', ${ref(field)}` : `'${name}', strftime('${ISO_FORMAT}', ${ref(field.iso)} / 1000.0, 'unixepoch')`;
  });
  return {
    of(row: Row): Shown<Row, S> {
      const shown: Record<string, unknown> = {};
      for (const [name, field] of fields) shown[name] = typeof field === "string" ? row[field] : toIso(row[field.iso] as number);
      return shown as Shown<Row, S>;
    },
    json: sql<JsonText<Shown<Row, S>>>`${sql.raw(`json_object(${pieces.join(", ")})`)}`,
  };
}
