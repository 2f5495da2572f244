// `verify`: checks a saved delivery (a JSON file with `body` and `headers`: a delivery record from
// GET /v1/webhooks/{id}/deliveries/{delivery_id}/, a feed item read with signed=true, or your own
// capture) with packages/verify, and says which check failed.
import { readFile } from "node:fs/promises";
import { verify } from "../../verify/index.js";
import { CliError } from "../api.js";

async function readSaved(file) {
  let text;
  try {
    text = file === "-" ? await new Response(process.stdin).text() : await readFile(file, "utf8");
  } catch (error) {
    throw new CliError(`Cannot read ${file}: ${error.code === "ENOENT" ? "no such file" : error.message}`);
  }
  let saved;
  try {
    saved = JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not JSON: save the delivery as {"headers": {…}, "body": "…"}.`);
  }
  if (typeof saved?.body !== "string" || saved.headers === null || typeof saved.headers !== "object") {
    throw new CliError(`${file} needs "body" (the exact text received) and "headers" (an object).`);
  }
  return saved;
}

export async function verifySaved({ file, secrets, username, password, toleranceSec = Infinity, out = process.stdout }) {
  if (!file) throw new CliError("verify needs a file: payments verify delivery.json --secret whsec_…");
  if (secrets.length === 0) throw new CliError("verify needs --secret whsec_… (and/or --public-key whpk_… for an ed25519 subscription).");
  const saved = await readSaved(file);
  const result = await verify({ body: saved.body, headers: saved.headers, secrets, username, password, toleranceSec });
  const id = Object.entries(saved.headers).find(([name]) => name.toLowerCase() === "webhook-id")?.[1] ?? saved.delivery_id ?? saved.id ?? "?";
  if (result.ok) {
    out.write(`OK: delivery ${id} is genuine${toleranceSec === Infinity ? " (its timestamp was not checked: pass --tolerance 300 to)" : ""}.\n`);
    return true;
  }
  out.write(`NOT VERIFIED (${result.reason}): ${result.detail}\n`);
  return false;
}
