/**
 * The most arguments any SQL function call in a statement takes, for D1's 32-argument limit,
 * which local D1 does not enforce. A call is a name followed by `(` that is not a keyword taking a
 * parenthesised list (`in (…)`, `values (…)`, a table's column list after `into t`, …); quoted
 * strings and identifiers are skipped. Pure.
 */
const NOT_CALLS = new Set([
  "in",
  "values",
  "exists",
  "as",
  "on",
  "using",
  "into",
  "table",
  "select",
  "where",
  "and",
  "or",
  "not",
  "from",
  "join",
  "with",
  "over",
  "filter",
  "when",
  "then",
  "else",
  "case",
  "by",
  "set",
  "conflict",
  "returning",
  "if",
  "key",
  "references",
  "check",
  "unique",
  "recursive",
  "is",
  "between",
  "like",
  "glob",
]);

export function widestFunctionCall(sql: string): number {
  // Strings, quoted identifiers and comments never hold a call.
  const text = sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|`[^`]*`|--[^\n]*|\/\*[\s\S]*?\*\//g, (quoted) =>
    quoted.startsWith("-") || quoted.startsWith("/") ? " " : "0",
  );
  const open: { call: boolean; args: number; empty: boolean }[] = [];
  let widest = 0;
  let last = "";
  let beforeLast = "";
  for (const [part] of text.matchAll(/[A-Za-z_][A-Za-z0-9_$]*|\S/g)) {
    if (part === "(") {
      const name = /^[A-Za-z_]/.test(last) ? last.toLowerCase() : "";
      const tableName = ["into", "table", "on", "exists", "from", "join"].includes(beforeLast.toLowerCase());
      open.push({ call: name !== "" && !NOT_CALLS.has(name) && !tableName, args: 1, empty: true });
    } else if (part === ")") {
      const frame = open.pop();
      if (frame?.call) widest = Math.max(widest, frame.empty ? 0 : frame.args);
    } else if (open.length > 0) {
      const frame = open.at(-1)!;
      if (part === ",") frame.args += 1;
      frame.empty = false;
    }
    beforeLast = last;
    last = part;
  }
  return widest;
}
