// Real Chromium (Debian's `chromium` package) driven by playwright-core, for the web UI
// tests: launching, pages at desktop and phone width in either theme, screenshots kept in
// test/output/screenshots (ignored by git), and the sign-in steps every UI test starts with.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { ADMIN_PASSWORD, INITIAL_PASSWORD } from './http.ts';
import { IN_CI } from './programs.ts';
import { ROOT } from './server.ts';

const CHROMIUM_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];
export const SCREENSHOT_DIR = join(ROOT, 'test', 'output', 'screenshots');

export const chromiumPath = (): string | undefined =>
  process.env.CHROMIUM_PATH ?? CHROMIUM_PATHS.find((path) => existsSync(path));

/** The `skip` option for browser tests: a reason off CI when Chromium is missing; false in CI. */
export function skipUnlessChromium(): string | false {
  return !chromiumPath() && !IN_CI ? 'chromium missing (apt-get install chromium)' : false;
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('Chromium not found: install the Debian package `chromium`');
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
  });
}

export interface PageOptions {
  /** 'phone' is 390×844, 'desktop' 1280×900. */
  viewport?: 'desktop' | 'phone';
  colorScheme?: 'light' | 'dark';
}

export async function newPage(
  browser: Browser,
  options: PageOptions = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const phone = options.viewport === 'phone';
  const context = await browser.newContext({
    viewport: phone ? { width: 390, height: 844 } : { width: 1280, height: 900 },
    colorScheme: options.colorScheme ?? 'light',
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return { context, page };
}

/** Writes test/output/screenshots/<name>.png (full page). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

export async function signIn(page: Page, baseUrl: string, username: string, password: string): Promise<void> {
  await page.goto(baseUrl);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The first admin sign-in: initial password, then the forced change to ADMIN_PASSWORD. */
export async function firstSignIn(page: Page, baseUrl: string): Promise<void> {
  await signIn(page, baseUrl, 'admin', INITIAL_PASSWORD);
  await page.getByLabel('Current password').fill(INITIAL_PASSWORD);
  await page.getByLabel('New password', { exact: true }).fill(ADMIN_PASSWORD);
  await page.getByLabel('Confirm new password').fill(ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}
