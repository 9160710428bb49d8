// What the UI test files (test/ui/*.test.ts) start with: a Station, usually a Scout, a
// Chromium and one page in it, all started together and closed together.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { firstSignIn, launchBrowser, newPage, type PageOptions } from './browser.ts';
import { type ServerOptions, startServer, type TestServer } from './server.ts';

export interface UiOptions {
  /** The Station's options; the built bundle (`entry: 'dist'`) unless they say otherwise. */
  station?: ServerOptions;
  /** The Scout's options (the built bundle too); `false` for a Station alone. */
  scout?: ServerOptions | false;
  page?: PageOptions;
  /** Installs the page's fake clock (the test moves it instead of waiting for a refresh). */
  clock?: boolean;
  /** Whose first admin sign-in the page does (initial password, then ADMIN_PASSWORD). */
  firstSignIn?: 'station' | 'scout';
}

export interface Ui {
  station: TestServer;
  /** Only when the options asked for a Scout (the default). */
  scout: TestServer;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Closes the page, the browser and the servers (safe after a failed start of the test). */
  close(): Promise<void>;
}

export async function startUi(options: UiOptions = {}): Promise<Ui> {
  const [station, scout, browser] = await Promise.all([
    startServer('station', { entry: 'dist', ...options.station }),
    options.scout === false ? undefined : startServer('scout', { entry: 'dist', ...options.scout }),
    launchBrowser(),
  ]);
  const { context, page } = await newPage(browser, options.page);
  if (options.clock) await page.clock.install();
  const ui: Ui = {
    station,
    scout: scout as TestServer,
    browser,
    context,
    page,
    async close() {
      await context.close();
      await browser.close();
      await Promise.all([scout?.dispose(), station.dispose()]);
    },
  };
  if (options.firstSignIn) await firstSignIn(page, ui[options.firstSignIn].url);
  return ui;
}
