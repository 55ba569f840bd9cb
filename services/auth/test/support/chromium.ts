import { chromium, type Browser } from 'playwright-core';
import { infra } from '../../../../test/support/infra.js';

// As the machine's probe starts Chromium: headless, no GPU, and nothing that calls out.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Debian's chromium (test/infra/browser.sh), headless, driven by playwright-core. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: infra('CHROMIUM_BIN'), args: CHROMIUM_ARGS });
}
