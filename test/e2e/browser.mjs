// The browser the end-to-end tests drive: Debian's Chromium through playwright-core, never a
// browser download. Without it, the browser tests are skipped with one line saying how to get it,
// except under CI, where a missing browser is a failure.
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const MISSING = `no Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH) to run the browser tests`;

/** For `it(name, { skip: noBrowser }, …)`: the reason to skip, or false. */
export const noBrowser = !existsSync(CHROMIUM) && !process.env.CI ? MISSING : false;

/** How long a page step may take: a loaded 2-core machine is many times slower than an idle one. */
const STEP_TIMEOUT_MS = 90_000;

export function launchBrowser() {
  if (!existsSync(CHROMIUM)) throw new Error(MISSING);
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/** A new page whose steps wait up to STEP_TIMEOUT_MS (playwright's default is 30 s). */
export async function openPage(browser, options) {
  const page = await browser.newPage(options);
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  return page;
}
