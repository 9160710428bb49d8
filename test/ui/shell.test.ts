// The shell both web apps share, in a real Chromium against a real Station and Scout:
// serving (gzip, cache lifetimes, CSP, client-side routes), sign-in, the forced password
// change, errors shown as the server's detail, sign-out.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, newPage, screenshot, signIn, skipUnlessChromium } from '../helpers/browser.ts';
import { ADMIN_PASSWORD, INITIAL_PASSWORD } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const skip = skipUnlessChromium();

for (const role of ['station', 'scout'] as const) {
  describe(`${role} web app shell`, { skip }, () => {
    let server: TestServer;
    let browser: Browser;

    before(async () => {
      [server, browser] = await Promise.all([startServer(role, { entry: 'dist' }), launchBrowser()]);
    });
    after(async () => {
      await browser?.close();
      await server?.dispose();
    });

    test('serves the app gzipped with a strict CSP; hashed assets cached for a year, the HTML never', async () => {
      const html = await fetch(`${server.url}/`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(html.status, 200);
      assert.equal(html.headers.get('content-encoding'), 'gzip');
      assert.equal(html.headers.get('cache-control'), 'no-cache');
      const csp = html.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline/);
      assert.equal(html.headers.get('x-content-type-options'), 'nosniff');
      const body = await html.text();
      assert.doesNotMatch(body, /<script>|<script type="module">[^<]/, 'no inline script');
      const script = body.match(/\/assets\/(main-[A-Z0-9]+\.js)/)?.[1];
      assert.ok(script, 'the page loads a hashed script');
      const asset = await fetch(`${server.url}/assets/${script}`, {
        headers: { 'accept-encoding': 'identity' },
      });
      assert.equal(asset.status, 200);
      assert.equal(asset.headers.get('content-encoding'), null, 'plain for clients that do not accept gzip');
      assert.match(asset.headers.get('cache-control') ?? '', /max-age=31536000, immutable/);
      assert.match(asset.headers.get('content-type') ?? '', /javascript/);
      assert.ok((await asset.text()).length > 1000);
    });

    test('client-side routes serve the app; unknown /api paths and assets stay JSON 404s', async () => {
      const route = await fetch(`${server.url}/some/client/route`);
      assert.equal(route.status, 200);
      assert.match(await route.text(), /<div id="app">/);
      const api = await fetch(`${server.url}/api/no-such-thing`);
      assert.equal(api.status, 404);
      assert.match(api.headers.get('content-type') ?? '', /application\/json/);
      assert.ok(((await api.json()) as { detail?: string }).detail);
      const asset = await fetch(`${server.url}/assets/main-NOPE.js`);
      assert.equal(asset.status, 404);
    });

    test('a wrong password shows the server detail; the first sign-in forces a password change', async () => {
      const { context, page } = await newPage(browser);
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      await signIn(page, server.url, 'admin', 'not the password');
      await page.getByRole('alert').waitFor();
      assert.match(await page.getByRole('alert').innerText(), /invalid|incorrect|wrong/i);
      await screenshot(page, `${role}-sign-in`);

      await signIn(page, server.url, 'admin', INITIAL_PASSWORD);
      await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
      assert.equal(await page.getByRole('navigation', { name: 'Main' }).count(), 0, 'nothing else reachable');
      // A client route does not get around it either.
      await page.goto(`${server.url}/settings`);
      await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
      await screenshot(page, `${role}-password-change`);

      // Mismatched confirmation: the server's detail, shown next to the form.
      await page.getByLabel('Current password').fill(INITIAL_PASSWORD);
      await page.getByLabel('New password', { exact: true }).fill(ADMIN_PASSWORD);
      await page.getByLabel('Confirm new password').fill(`${ADMIN_PASSWORD}x`);
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('alert').waitFor();
      assert.match(await page.getByRole('alert').innerText(), /differ/i);

      await page.getByLabel('Confirm new password').fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      assert.deepEqual(
        errors.filter((text) => !/401|400|Failed to load resource/.test(text)),
        [],
        'no console errors (CSP)',
      );

      // Signing out returns to sign-in; the session cookie no longer works.
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await page.reload();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await context.close();
    });

    test('signing out everywhere ends the sessions of other browsers', async () => {
      const { context, page } = await newPage(browser);
      await signIn(page, server.url, 'admin', ADMIN_PASSWORD);
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      // Another browser signs out everywhere: this page's next request answers 401.
      const other = await newPage(browser);
      await signIn(other.page, server.url, 'admin', ADMIN_PASSWORD);
      await other.page.getByRole('button', { name: 'Sign out everywhere' }).click();
      await other.page.getByRole('button', { name: 'Sign in' }).waitFor();
      await page.reload();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await other.context.close();
      await context.close();
    });
  });
}
