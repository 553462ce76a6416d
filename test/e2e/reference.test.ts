// The interactive API reference at /docs (Swagger UI from our own static files, no CDN) in headless Chromium against
// the real Worker: every operation of /openapi.json is rendered, a call without a token answers the documented 401,
// a user authorizes with a bearer token in Swagger UI's Authorize dialog and tries calls, and signing in from the
// page authorizes it by itself. Swagger UI's own terms: "Try it out" and "Authorize"
// (https://swagger.io/docs/open-source-tools/swagger-ui/usage/configuration/: tryItOutEnabled, persistAuthorization).
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { launchChromium, openPage as openBrowserPage } from './chromium.ts'
import { artifactsDir, START_MS, uniqueEmail, waitForServers } from './dev-worker.ts'

const WAIT_MS = 60_000
const PASSWORD = 'a long enough password'
const worker = { url: inject('devWorkerUrl') }
let browser: Browser

beforeAll(async () => {
  ;[browser] = await Promise.all([launchChromium(), waitForServers(worker.url)])
}, START_MS)

afterAll(async () => {
  await browser?.close()
})

async function signUp(): Promise<{ email: string; token: string }> {
  const email = uniqueEmail('reference')
  const post = (path: string, body: object) =>
    fetch(`${worker.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  expect((await post('/auth/register', { email, password: PASSWORD, name: 'Reference Test' })).status).toBe(201)
  const login = (await (await post('/auth/login', { email, password: PASSWORD })).json()) as { token: string }
  return { email, token: login.token }
}

/** Expands an operation of Swagger UI and presses Execute; answers the live response's status and body text. */
async function execute(
  page: Page,
  operationId: string,
  fill?: (operation: ReturnType<Page['locator']>) => Promise<void>,
) {
  const operation = page.locator(`[id$="-${operationId}"].opblock`)
  if (!(await operation.locator('.opblock-body').isVisible()))
    await operation.locator('.opblock-summary-control').click()
  await fill?.(operation)
  // An earlier answer is cleared first, so the one read below is this call's.
  const clear = operation.locator('button.btn-clear')
  if (await clear.isVisible()) await clear.click()
  await operation.locator('.live-responses-table').waitFor({ state: 'detached', timeout: WAIT_MS })
  await operation.locator('button.execute').click()
  await operation.locator('.live-responses-table .response .response-col_status').first().waitFor({ timeout: WAIT_MS })
  const status = (
    await operation.locator('.live-responses-table .response .response-col_status').first().textContent()
  )?.trim()
  const body = await operation
    .locator('.live-responses-table .response .microlight, .live-responses-table .response pre')
    .first()
    .textContent()
  return { status, body: body ?? '' }
}

describe('/docs in Chromium', () => {
  it('renders every operation of /openapi.json with Swagger UI, from this origin only, with no script error', async () => {
    const document = (await (await fetch(`${worker.url}/openapi.json`)).json()) as { paths: Record<string, object> }
    const operations = Object.values(document.paths).reduce(
      (sum, item) => sum + Object.keys(item).filter((key) => key !== 'parameters').length,
      0,
    )
    const { page, errors } = await openPage('/docs')
    const requested: string[] = []
    page.on('request', (request) => requested.push(request.url()))
    await page.locator('.opblock').first().waitFor({ timeout: WAIT_MS })
    await expect.poll(() => page.locator('.opblock').count()).toBe(operations)
    expect(await page.locator('.opblock-head, .opblock-summary-method', { hasText: 'HEAD' }).count()).toBeGreaterThan(0)
    expect(requested.filter((url) => !url.startsWith(worker.url) && !url.startsWith('data:'))).toEqual([])
    expect(errors).toEqual([])
    await page.close()
  })

  it('tries a call, is refused without a token, authorizes with one and tries it again', async () => {
    const { email, token } = await signUp()
    const { page, errors } = await openPage('/docs')
    await page.locator('.opblock').first().waitFor({ timeout: WAIT_MS })

    const refused = await execute(page, 'getAuthUser')
    expect(refused.status).toBe('401')
    expect(refused.body).toContain('TOKEN_MISSING')

    await page.locator('button.authorize').first().click()
    const dialog = page.locator('.dialog-ux .modal-ux')
    await dialog.waitFor({ timeout: WAIT_MS })
    const bearer = dialog.locator('form', { hasText: 'bearer (http, Bearer)' })
    await bearer.locator('input').fill(token)
    await bearer.locator('button.authorize').click()
    await dialog.locator('button.btn-done, button.close-modal').first().click()

    const allowed = await execute(page, 'getAuthUser')
    expect(allowed.status).toBe('200')
    expect(allowed.body).toContain(email)
    await page.screenshot({ path: join(artifactsDir, 'docs.png'), fullPage: false })
    // The browser reports the refused call it was asked to make, and nothing else.
    expect(errors).toEqual(['Failed to load resource: the server responded with a status of 401 (Unauthorized)'])
    await page.close()
  })

  it('is authorized by signing in from the page', async () => {
    const { email } = await signUp()
    const { page, errors } = await openPage('/docs')
    await page.locator('.opblock').first().waitFor({ timeout: WAIT_MS })
    const login = await execute(page, 'postAuthLogin', async (operation) => {
      await operation.locator('textarea.body-param__text').fill(JSON.stringify({ email, password: PASSWORD }))
    })
    expect(login.status).toBe('200')
    const user = await execute(page, 'getAuthUser')
    expect(user.status).toBe('200')
    expect(user.body).toContain(email)
    expect(errors).toEqual([])
    await page.close()
  })
})

const openPage = (path: string) => openBrowserPage(browser, `${worker.url}${path}`)
