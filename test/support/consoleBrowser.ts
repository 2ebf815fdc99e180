// The console in a real browser for tests: Debian's Chromium (or CHROMIUM_PATH's) driven by
// playwright-core, pages that load nothing but the server under test, the sign-in form filled as a
// person would, and screenshots in test-output/console/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { addAccount, type Reach } from './admin';
import { launchChromium } from './chromium';
import { requireTools } from './requireTools';
import { startServer, type RunningServer } from './server';
import { findTool, type Requirement } from './systemTools';

/** CHROMIUM_PATH names another Chromium build; else Debian's, found on the PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? findTool('chromium');
export const SCREENSHOTS = fileURLToPath(new URL('../../test-output/console/', import.meta.url));

/** Whether `what`, in the test file being collected, can run: a Chromium to drive. */
export function requireChromium(what: string): Requirement {
  return requireTools(process.env.CHROMIUM_PATH === undefined ? ['chromium'] : [], what);
}

/** Lets `target` (a page, or every page of a context) load from `server` and nowhere else. */
export async function onlyFrom(target: Page | BrowserContext, server: Pick<RunningServer, 'url'>): Promise<void> {
  await target.route('**/*', (route) => (route.request().url().startsWith(server.url) ? route.continue() : route.abort()));
}

export interface ConsoleAccount {
  email: string;
  password: string;
}

/** Fills the console's sign-in form (going to it unless `page` shows it) and waits for the overview. */
export async function signIn(page: Page, server: Pick<RunningServer, 'url'>, account: ConsoleAccount): Promise<void> {
  const form = `${server.url}/console/sign-in`;
  if (page.url() !== form) await page.goto(form);
  await page.getByLabel('Email').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${server.url}/console/overview`);
}

export interface ConsoleInChromium extends Requirement {
  /** The file's server and its page, 1280 × 900 (from its beforeAll on, unless skipped). */
  readonly server: RunningServer;
  readonly page: Page;
  /** Signs the page in as the file's admin account. */
  signIn(): Promise<void>;
  /** A full-page screenshot of the page, test-output/console/<name>.png. */
  shoot(name: string): Promise<void>;
}

/**
 * Registers the hooks of a console browser test file: unless Chromium is missing, the real server
 * with an admin account (`admin`, reaching `reach`), Chromium, and one page that loads only from
 * that server; all closed after the file. `test.skipIf(it.skip)(it.title, ...)` runs the test.
 */
export function consoleInChromium(what: string, admin: ConsoleAccount & { reach: Reach }): ConsoleInChromium {
  const requirement = requireChromium(what);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  const started = () => {
    if (server === undefined || page === undefined) throw new Error('the console browser is used outside its tests');
    return { server, page };
  };

  beforeAll(async () => {
    if (requirement.skip) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    server = await startServer();
    const added = await addAccount(server, admin.email, admin.reach, admin.password);
    expect(added.code, added.stderr).toBe(0);
    browser = await launchChromium(CHROMIUM);
    // A fresh profile: playwright gives each new page's context its own.
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await onlyFrom(page, server);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  return {
    ...requirement,
    get server() {
      return started().server;
    },
    get page() {
      return started().page;
    },
    signIn() {
      return signIn(started().page, started().server, admin);
    },
    async shoot(name) {
      await started().page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
  };
}
