import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { infra } from '../../../../test/support/infra.js';
import { HANG_GUARD_MS } from '../../../../test/support/progress.js';

// As the machine's probe starts Chromium: headless, no GPU, and nothing that calls out.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Debian's chromium (test/infra/browser.sh), headless, driven by playwright-core. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: infra('CHROMIUM_BIN'), args: CHROMIUM_ARGS });
}

/** What a browser step leaves of its test's hang guard: a step that never comes fails first, by Playwright's error. */
const STEP_MARGIN_MS = 60_000;

/**
 * A fresh browser profile that accepts the tests' self-signed certificates. Its steps wait almost
 * as long as the hang guard, not Playwright's 30 s: a sign-in through Keycloak's pages is Chromium's
 * and Keycloak's work, whose pace on a busy machine the journeys do not assert. A step that never
 * comes still fails, a minute before the guard that the browser tests' `it`s take, so that the
 * failure names the step and its call log (jest's own timeout names only the test).
 */
export async function newBrowserContext(browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  context.setDefaultTimeout(HANG_GUARD_MS - STEP_MARGIN_MS);
  return context;
}
