// `npm run check:structure`: the house's rules, checked from the source (test/node/structure.test.mjs
// runs the same checks in `npm test`):
// - imports: no file in src/ imports from a room above its own (ROOMS, lowest first), and inside
//   src/webhooks/ none from a room listed before its own (WEBHOOK_ROOMS), except the type imports
//   named in ALLOWED_UPWARD; and only the edge (EDGE) imports src/dev/, the development layer;
// - batches: outside src/db/ and src/dev/, no code runs a binding's batch itself or reads a
//   batch's results by position (rawBatches);
// - comments: every file a comment names (a path ending in .ts, .mjs, .sql, .md, .toml) is there,
//   every section it cites by name (`docs/interface.md, "The feed"`) is a heading or a bold lead
//   of that document, every section it cites by number ("section 5.1", "§ 7") is a numbered heading
//   of docs/interface.md, and every name of code it puts in backticks (`applyEvent`, `KeyDecided`,
//   `RETENTION_PER_RUN`) is in some file's code under src/;
// - repeats: no run of REPEAT_LINES or more lines appears twice in src/ (blank lines, comments,
//   imports and lines of brackets alone aside);
// - walks: every step of docs/architecture.md's walks names a file that is there and functions
//   (`name()`) that its code has, and no walk takes more than WALK_STEPS steps.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

/** src/'s rooms from the ground up: a room imports only from rooms on a lower line. */
export const ROOMS = [
  ["env.ts", "errors.ts"],
  ["lib"],
  ["db"],
  ["dev", "idempotency", "context.ts"],
  ["webhooks", "app-env.ts"],
  ["services"],
  ["middleware"],
  ["routes", "cron.ts"],
  ["app.ts"],
  ["index.ts"],
];

/** src/webhooks/'s rooms from the ground up (src/webhooks/index.ts, the face, stands on all of them). */
export const WEBHOOK_ROOMS = ["wire", "outbox", "subscriptions", "replays", "upkeep", "delivery", "index.ts"];

/** Type imports allowed to point up, as "importer -> imported" (paths under src/). */
export const ALLOWED_UPWARD = [];

export const REPEAT_LINES = 6;

/** The most steps a walk of docs/architecture.md may take. */
export const WALK_STEPS = 12;

/** The one file that may import src/dev/: the engine gets what the development layer sets from it. */
export const EDGE = "src/index.ts";

/** Every file under `dir` (a path from the repository's root) with one of the extensions. */
export function filesUnder(dir, extensions = [".ts"]) {
  const out = [];
  const walk = (path) => {
    for (const name of readdirSync(join(ROOT, path))) {
      const child = `${path}/${name}`;
      if (statSync(join(ROOT, child)).isDirectory()) walk(child);
      else if (extensions.some((extension) => name.endsWith(extension))) out.push(child);
    }
  };
  walk(dir);
  return out.sort();
}

/** A file's imports and re-exports of other modules: each one's specifier and whether it brings in types only. */
export function importsOf(text) {
  const found = [];
  const statement = /(?:^|\n)\s*(import|export)\s+(type\s+)?([\w*{}\s,$]*?)\s*from\s*"([^"]+)"/g;
  for (const match of text.matchAll(statement)) {
    const names = match[3];
    const inlineTypes =
      /^\{[\s\S]*\}$/.test(names.trim()) &&
      names
        .replace(/[{}]/g, "")
        .split(",")
        .map((name) => name.trim())
        .filter(Boolean)
        .every((name) => name.startsWith("type "));
    found.push({ specifier: match[4], typeOnly: Boolean(match[2]) || inlineTypes });
  }
  for (const match of text.matchAll(/(?:^|\n)\s*import\s+"([^"]+)"/g)) found.push({ specifier: match[1], typeOnly: false });
  for (const match of text.matchAll(/import\("([^"]+)"\)/g)) found.push({ specifier: match[1], typeOnly: true });
  return found;
}

/** The room of a path under src/ (its first part), and its floor in ROOMS. */
function roomOf(path) {
  const room = path.replace(/^src\//, "").split("/")[0];
  return { room, floor: ROOMS.findIndex((rooms) => rooms.includes(room)) };
}

function webhookRoomOf(path) {
  const room = path.replace(/^src\/webhooks\//, "").split("/")[0];
  return { room, floor: WEBHOOK_ROOMS.indexOf(room) };
}

/** The file a relative specifier names, from the file that imports it; null for a package. */
function resolved(from, specifier) {
  if (!specifier.startsWith(".")) return null;
  const base = join(dirname(from), specifier);
  for (const candidate of [`${base}.ts`, `${base}/index.ts`, base])
    if (existsSync(join(ROOT, candidate)) && statSync(join(ROOT, candidate)).isFile()) return candidate;
  return `${base}.ts`;
}

/** Every import in `files` that points up, as "importer -> imported (why)"; `read` gives a file's text. */
export function upwardImports(files, read = (path) => readFileSync(join(ROOT, path), "utf8")) {
  const found = [];
  for (const file of files) {
    for (const { specifier, typeOnly } of importsOf(read(file))) {
      const target = resolved(file, specifier);
      if (!target || !target.startsWith("src/")) continue;
      const edge = `${file.replace(/^src\//, "")} -> ${target.replace(/^src\//, "")}`;
      if (typeOnly && ALLOWED_UPWARD.includes(edge)) continue;
      const from = roomOf(file);
      const to = roomOf(target);
      if (from.floor === -1 || to.floor === -1) found.push(`${edge} (a room ROOMS does not name)`);
      else if (from.room !== to.room && to.floor >= from.floor) found.push(`${edge} (${to.room} is not below ${from.room})`);
      else if (from.room === "webhooks" && to.room === "webhooks") {
        const inner = webhookRoomOf(file);
        const other = webhookRoomOf(target);
        if (inner.floor === -1 || other.floor === -1) found.push(`${edge} (a room WEBHOOK_ROOMS does not name)`);
        else if (inner.room !== other.room && other.floor >= inner.floor) found.push(`${edge} (webhooks/${other.room} is not below webhooks/${inner.room})`);
      }
    }
  }
  return found;
}

/** Every import of src/dev/ from outside it but the edge, as "importer -> imported". */
export function devImports(files, read = (path) => readFileSync(join(ROOT, path), "utf8")) {
  const found = [];
  for (const file of files) {
    if (file === EDGE || file.startsWith("src/dev/")) continue;
    for (const { specifier } of importsOf(read(file))) {
      const target = resolved(file, specifier);
      if (target?.startsWith("src/dev/")) found.push(`${file.replace(/^src\//, "")} -> ${target.replace(/^src\//, "")}`);
    }
  }
  return found;
}

/** The folders whose code may call a binding's `.batch(` itself: the one that names batches, and the development layer's wrappers. */
export const BATCH_ROOMS = ["src/db/", "src/dev/"];

/**
 * Every batch run outside BATCH_ROOMS without names, and every batch result read by position, as
 * "file:line": a batch goes through `runNamedBatch` (or `runNamedD1Batch`), and `runBatch`'s
 * answer (a list of like statements) is read whole, never `[i]` or `const [a, b] =`.
 */
export function rawBatches(files, read = (path) => readFileSync(join(ROOT, path), "utf8")) {
  const found = [];
  for (const file of files) {
    if (BATCH_ROOMS.some((room) => file.startsWith(room))) continue;
    read(file)
      .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, " "))
      .split("\n")
      .forEach((line, i) => {
        const code = line.replace(/\/\/.*$/, "");
        const raw = /\.batch\(/.test(code);
        const positional = /const \[[^\]]*\] = .*\b(runBatch|batch)\(/.test(code) || /\b(runBatch|batch)\([^;]*\)\)\s*(\[\d|\.slice\()/.test(code);
        if (raw || positional) found.push(`${file}:${i + 1}`);
      });
  }
  return found;
}

/** The comments of a TypeScript or JavaScript file, as one text. */
function commentsOf(text) {
  return [...text.matchAll(/\/\*[\s\S]*?\*\/|(?<![:"'`\w])\/\/[^\n]*/g)].map((match) => match[0]).join("\n");
}

/**
 * Every file a comment in `files` names that is not there: a name with a folder, found from the
 * file's own folder, src/, src/webhooks/ or the repository's root; a bare name, in the file's folder
 * or anywhere under src/.
 */
export function missingFileNames(files, read = (path) => readFileSync(join(ROOT, path), "utf8")) {
  const everywhere = new Set(filesUnder("src", [".ts", ".d.ts"]).map((path) => path.split("/").at(-1)));
  const found = [];
  for (const file of files) {
    for (const match of commentsOf(read(file)).matchAll(/(?<![\w/.-])((?:\.{1,2}\/)?[\w.-]+(?:\/[\w.-]+)*\.(?:ts|mjs|sql|md|toml))\b/g)) {
      const name = match[1];
      const bases = [dirname(file), "src", "src/webhooks", "."];
      const there = name.includes("/")
        ? bases.some((base) => existsSync(join(ROOT, base, name)))
        : existsSync(join(ROOT, dirname(file), name)) || everywhere.has(name) || existsSync(join(ROOT, name));
      if (!there) found.push(`${file}: ${name}`);
    }
  }
  return found;
}

/** A heading (`## …`) or a bold lead (`- **…**`) of a document, as a comment may cite it. */
function sectionsOf(document) {
  return [...readFileSync(join(ROOT, document), "utf8").matchAll(/^(?:#+ |- \*\*)(.+?)(?:\*\*|$)/gm)].map((match) => match[1].replace(/\*\*$/, ""));
}

/**
 * Every section a comment in `files` cites by name from a document (`docs/interface.md, "The
 * feed"`, or several: `, "Recover" and "Stats"`) that the document has not: a heading or a bold
 * lead that starts with the name.
 */
export function missingSections(files, read = (path) => readFileSync(join(ROOT, path), "utf8")) {
  const found = [];
  for (const file of files) {
    const text = commentsOf(read(file))
      .split("\n")
      .map((line) => line.replace(/^\s*(\/\*\*?|\*\/?|\/\/)\s?/, ""))
      .join(" ");
    for (const match of text.matchAll(/((?:docs\/)?[\w-]+\.md),((?:,? (?:and )?"[^"]+")+)/g)) {
      const document = match[1].startsWith("docs/") || match[1] === "README.md" ? match[1] : `docs/${match[1]}`;
      if (!existsSync(join(ROOT, document))) continue;
      const sections = sectionsOf(document);
      for (const [, name] of match[2].matchAll(/"([^"]+)"/g))
        if (!sections.some((section) => section.startsWith(name))) found.push(`${file}: ${document}, "${name}"`);
    }
  }
  return found;
}

/** The comments of a file as one line of text, their markers gone. */
function commentText(text) {
  return commentsOf(text)
    .split("\n")
    .map((line) => line.replace(/^\s*(\/\*\*?|\*\/?|\/\/)\s?/, ""))
    .join(" ");
}

/**
 * Every section a comment in `files` cites by number ("section 5.1", "sections 7 and 9", "§ 10.3")
 * that docs/interface.md has no numbered heading for (`## 5.1 …`). A clone has no other document
 * with numbered sections: cite docs/interface.md by name instead.
 */
export function numberedSections(files, read = (path) => readFileSync(join(ROOT, path), "utf8")) {
  const numbered = new Set([...readFileSync(join(ROOT, "docs/interface.md"), "utf8").matchAll(/^#+ (\d+(?:\.\d+)*)\b/gm)].map((match) => match[1]));
  const found = [];
  for (const file of files) {
    for (const match of commentText(read(file)).matchAll(/(?:\b[Ss]ections?|§)\s*(\d+(?:\.\d+)*(?:(?:,\s*| and | to |-)\d+(?:\.\d+)*)*)/g)) {
      for (const [number] of match[1].matchAll(/\d+(?:\.\d+)*/g)) if (!numbered.has(number)) found.push(`${file}: section ${number}`);
    }
  }
  return found;
}

/** Whether a backticked word reads as a name of code: camelCase, PascalCase of two words or more, or a CONSTANT_NAME. */
const isCodeName = (word) =>
  /^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$/.test(word) || /^[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*$/.test(word) || /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(word);

/**
 * Every name of code a comment in `files` puts in backticks (`applyEvent`, `applyEvent()`,
 * `KeyDecided`, `RETENTION_PER_RUN`) that appears in no file's code under src/ (comments aside):
 * a comment that explains something gone.
 */
export function unknownNames(files, read = (path) => readFileSync(join(ROOT, path), "utf8")) {
  const everything = filesUnder("src", [".ts"]);
  const code = new Set();
  for (const file of new Set([...everything, ...files])) {
    const text = read(file) ?? readFileSync(join(ROOT, file), "utf8");
    for (const [word] of text.replace(/\/\*[\s\S]*?\*\/|(?<![:"'`\w])\/\/[^\n]*/g, " ").matchAll(/[A-Za-z_$][\w$]*/g)) code.add(word);
  }
  const found = [];
  for (const file of files) {
    for (const [, word] of commentText(read(file)).matchAll(/`([A-Za-z_$][\w$]*)(?:\(\))?`/g))
      if (isCodeName(word) && !code.has(word)) found.push(`${file}: \`${word}\``);
  }
  return found;
}

/**
 * What is wrong with the walks of a document (its "## Walks" section): a step (`N. \`file\` …`)
 * whose file is not there, or that names a function (`\`name()\``) the file's code lacks, and a walk
 * (a numbered list) longer than WALK_STEPS.
 */
export function walkProblems(document = "docs/architecture.md", read = (path) => readFileSync(join(ROOT, path), "utf8")) {
  const text = read(document);
  const start = text.indexOf("\n## Walks");
  if (start < 0) return [`${document}: no "## Walks" section`];
  const found = [];
  let steps = 0;
  for (const line of text
    .slice(start + 1)
    .split("\n")
    .slice(1)) {
    if (line.startsWith("## ")) break;
    const step = /^(\d+)\. `([^`]+)`(.*)$/.exec(line);
    if (!step) continue;
    steps = step[1] === "1" ? 1 : steps + 1;
    if (steps > WALK_STEPS) found.push(`${document}: a walk of more than ${WALK_STEPS} steps (step ${step[1]})`);
    const [, number, file, rest] = step;
    if (!existsSync(join(ROOT, file))) {
      found.push(`${document}: step ${number} names ${file}, which is not there`);
      continue;
    }
    const code = read(file).replace(/\/\*[\s\S]*?\*\/|(?<![:"'`\w])\/\/[^\n]*/g, " ");
    for (const [, name] of rest.matchAll(/`([A-Za-z_$][\w$]*)\(\)`/g)) {
      if (!new RegExp(`\\b${name}\\b`).test(code)) found.push(`${document}: step ${number} names ${name}() in ${file}, which has no such code`);
    }
  }
  return found;
}

/** A line as the repeat check compares it; null for one it passes over. */
function comparable(line) {
  const text = line.trim();
  if (text === "" || text.startsWith("//") || text.startsWith("*") || text.startsWith("/*")) return null;
  if (/^[\s{}()[\];,]*$/.test(text)) return null;
  return text;
}

/** Every run of `size` compared lines that appears more than once in `files`, with where. */
export function repeatedRuns(files, size = REPEAT_LINES, read = (path) => readFileSync(join(ROOT, path), "utf8")) {
  const seen = new Map();
  for (const file of files) {
    let inImport = false;
    const lines = read(file)
      .split("\n")
      .map((line, i) => {
        // An import's list of names is no repeated code.
        inImport ||= /^(import|export) (type )?\{$/.test(line.trim());
        const text = inImport || /^import /.test(line) ? null : comparable(line);
        if (inImport && /^\} from "/.test(line.trim())) inImport = false;
        return { text, at: i + 1 };
      })
      .filter((line) => line.text !== null);
    for (let i = 0; i + size <= lines.length; i++) {
      const key = lines
        .slice(i, i + size)
        .map((line) => line.text)
        .join("\n");
      const where = `${file}:${lines[i].at}`;
      seen.set(key, [...(seen.get(key) ?? []), where]);
    }
  }
  return [...seen.values()].filter((places) => places.length > 1).map((places) => places.join(" = "));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const src = filesUnder("src");
  const problems = [
    ...upwardImports(src).map((line) => `import up: ${line}`),
    ...devImports(src).map((line) => `the development layer imported past the edge: ${line}`),
    ...rawBatches(src).map((line) => `a batch run or read without names: ${line}`),
    ...missingFileNames(src).map((line) => `comment names a missing file: ${line}`),
    ...missingSections(src).map((line) => `comment cites a missing section: ${line}`),
    ...numberedSections(src).map((line) => `comment cites a numbered section docs/interface.md lacks: ${line}`),
    ...unknownNames(src).map((line) => `comment names code that is not there: ${line}`),
    ...repeatedRuns(src).map((line) => `repeated lines: ${line}`),
    ...walkProblems().map((line) => `a walk that does not hold: ${line}`),
  ];
  for (const line of problems) console.log(line);
  console.log(problems.length === 0 ? "The house keeps its rules." : `${problems.length} problems.`);
  process.exit(problems.length === 0 ? 0 : 1);
}
