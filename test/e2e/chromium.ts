// Headless Chromium for the end-to-end tests of the pages (`playwright-core` driving the Debian `chromium` that
// .ci/install-system.sh installs): one browser per test file, a page that records every script error.
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, expect } from 'vitest'
import { START_MS, waitForServers } from './dev-worker.ts'

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking']

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS })
}

/** A new page at `url`; `errors` collects uncaught exceptions and console errors (CSP violations among them). */
export async function openPage(browser: Browser, url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 720 } })
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  page.on('console', (message) => message.type() === 'error' && errors.push(message.text()))
  await page.goto(url)
  return { page, errors }
}

/** The Uppy Dashboard's file input in the console (hidden; Playwright sets files on it as a picker would). */
export const DASHBOARD_FILE_INPUT = '#uploader .uppy-Dashboard-input[name="files[]"]'

/** One browser for the test file, launched while the run's Worker is awaited, closed after the file; the getter
 * answers it inside tests. */
export function browserForFile(workerUrl: string): () => Browser {
  let browser: Browser | undefined
  beforeAll(async () => {
    ;[browser] = await Promise.all([launchChromium(), waitForServers(workerUrl)])
  }, START_MS)
  afterAll(async () => {
    await browser?.close()
  })
  return () => browser!
}

/** The password the console tests' accounts use. */
export const CONSOLE_PASSWORD = 'a long enough password'

/** Creates an account on the console's sign-in screen and waits until the page says who is signed in. */
export async function registerInConsole(page: Page, email: string): Promise<void> {
  await page.waitForSelector('#auth-panel:not([hidden])', { timeout: 60_000 })
  await page.fill('#auth-form input[name=email]', email)
  await page.fill('#auth-form input[name=password]', CONSOLE_PASSWORD)
  await page.click('#auth-form button[value=register]')
  await expect.poll(() => page.textContent('#who'), { timeout: 60_000 }).toBe(email)
}
