// The one reader and writer of `.dev.vars`-style files (NAME="value" lines, # comments), which
// wrangler reads for local secrets: `npm start` writes .dev.vars, the tools read it.
import { readFileSync, writeFileSync } from "node:fs";

/** The variables in a file, as an object. */
export function readDevVars(path = ".dev.vars") {
  const vars = {};
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"?([^"]*)"?\s*$/.exec(line);
    if (match) vars[match[1]] = match[2];
  }
  return vars;
}

/** Writes `vars` (after `comments`, each a line) readable only by its owner. */
export function writeDevVars(path, vars, comments = []) {
  const lines = [...comments.map((line) => `# ${line}`), ...Object.entries(vars).map(([name, value]) => `${name}=${JSON.stringify(String(value))}`), ""];
  writeFileSync(path, lines.join("\n"), { mode: 0o600 });
}
