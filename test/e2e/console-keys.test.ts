// The console's API keys screen (on the account screen) in headless Chromium against the real Worker (wrangler dev): create a files:read
// key, see it once, list it, use it from a server (GET /files), revoke it with its button, see it refused.
import { describe, expect, inject, it } from 'vitest'
import { browserForFile, openPage } from './chromium.ts'
import { uniqueEmail } from './dev-worker.ts'

const WAIT_MS = 60_000
const worker = { url: inject('devWorkerUrl') }
const browser = browserForFile(worker.url)

describe('the console: API keys', () => {
  it('creates a key shown once, lists it, and revokes it', async () => {
    const { page, errors } = await openPage(browser(), `${worker.url}/console`)
    await page.fill('#auth-form input[name=email]', uniqueEmail('console-keys'))
    await page.fill('#auth-form input[name=password]', 'a long enough password')
    await page.click('#auth-form button[value=register]')
    await page.waitForSelector('#files-panel:not([hidden])', { timeout: WAIT_MS })
    await page.click('#tabs a[data-screen=account]')
    await page.waitForSelector('#account-panel:not([hidden])', { timeout: WAIT_MS })

    await page.fill('#key-form input[name=name]', 'nightly export')
    await page.click('#key-form button[type=submit]')
    await page.waitForSelector('#new-key:not([hidden])', { timeout: WAIT_MS })
    const key = (await page.textContent('#new-key-value'))!
    expect(key).toMatch(/^efk_[A-Za-z0-9_-]{43}$/)
    await expect.poll(() => page.locator('#keys li').count()).toBe(1)
    expect(await page.textContent('#keys li')).toContain(
      `nightly export · ${key.slice(0, 12)}… · files:read · never used`,
    )

    const listed = await fetch(`${worker.url}/files`, { headers: { authorization: `Bearer ${key}` } })
    expect(listed.status).toBe(200)
    await page.click('#keys li button[data-action=revoke]')
    await expect.poll(() => page.locator('#keys li').count()).toBe(0)
    expect((await fetch(`${worker.url}/files`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401)
    expect(errors).toEqual([])
    await page.close()
  })
})
