// The console's admin screen in headless Chromium against the real Worker (wrangler dev): an admin (made one in the
// Worker's local D1, as an operator makes the first) finds a user by part of their address, changes their role,
// marks their address verified, sees their files, jobs and sessions (the same after a reload), ends a session and
// deletes the account; a user who is not an admin has no admin screen.
import { describe, expect, inject, it } from 'vitest'
import { browserForFile, CONSOLE_PASSWORD, openPage, registerInConsole } from './chromium.ts'
import { grantAdmin, uniqueEmail } from './dev-worker.ts'
import { fetchJson } from '../support/request.ts'

const WAIT_MS = 60_000
const SHOTS = '/tmp/console-shots'
const PASSWORD = CONSOLE_PASSWORD
const worker = { url: inject('devWorkerUrl') }
const browser = browserForFile(worker.url)

/** A user signed up through the API, with one upload converted (its job done) and one whose job failed. */
async function userWithWork(prefix: string) {
  const email = uniqueEmail(prefix)
  const registered = await fetchJson(worker.url, 'POST', '/auth/register', {
    json: { email, password: PASSWORD, name: 'Bob Tables' },
  })
  const { body: session } = await fetchJson(worker.url, 'POST', '/auth/login', { json: { email, password: PASSWORD } })
  const upload = async (name: string, body: string | Uint8Array) =>
    (
      await fetchJson(worker.url, 'POST', '/files', {
        token: session.token,
        headers: { 'x-edgefloor-name': name },
        body,
      })
    ).body
  const notes = await upload('notes.txt', 'Minutes of the meeting.\nEverybody agreed.')
  expect(
    (await fetchJson(worker.url, 'POST', `/files/${notes._id}/convert`, { json: {}, token: session.token })).status,
  ).toBe(200)
  // A JPEG's first bytes and then nothing a decoder can read: a job that starts and fails.
  const broken = await upload(
    'broken.jpg',
    new Uint8Array([0xff, 0xd8, 0xff, 0xe0, ...new TextEncoder().encode('not the rest of a JPEG')]),
  )
  const failed = await fetchJson(worker.url, 'POST', `/files/${broken._id}/convert`, { json: {}, token: session.token })
  expect(failed.body).toMatchObject({ code: expect.any(String), job: expect.any(String) })
  return { id: registered.body.user._id, email, token: session.token }
}

const userStatus = async (token: string) =>
  (await fetch(`${worker.url}/auth/user`, { headers: { authorization: `Bearer ${token}` } })).status

describe('the console: admin screen', () => {
  it('finds a user, changes the role, marks verified, shows files, jobs and sessions after a reload, ends a session, deletes', async () => {
    const bob = await userWithWork('bob')
    const { page, errors } = await openPage(browser(), `${worker.url}/console`)
    const adminEmail = uniqueEmail('console-admin')
    await registerInConsole(page, adminEmail)
    expect(await page.isHidden('#tab-admin')).toBe(true)
    await grantAdmin(inject('devWorkerState'), adminEmail)
    await page.reload()
    await page.waitForSelector('#tab-admin:not([hidden])', { timeout: WAIT_MS })
    await page.click('#tab-admin')
    await page.waitForSelector('#admin-panel:not([hidden])')

    // Part of the address, in capitals: the search is case-insensitive.
    await page.fill('#admin-search input[name=q]', bob.email.slice(0, 10).toUpperCase())
    await page.click('#admin-search button[type=submit]')
    // The screen opened with every user; the search leaves Bob alone.
    await expect.poll(() => page.locator('#admin-users tr').count(), { timeout: WAIT_MS }).toBe(1)
    const row = page.locator(`#admin-users tr[data-id="${bob.id}"]`)
    expect(await row.locator('.user-email').textContent()).toBe(bob.email)

    await row.locator('select[name=role]').selectOption('admin')
    await expect.poll(() => page.textContent('#admin-message')).toBe(`${bob.email} is now admin.`)
    await row.locator('button[data-action=verify]').click()
    await expect.poll(() => page.locator(`#admin-users tr[data-id="${bob.id}"] .verified`).count()).toBe(1)
    const account = (await (
      await fetch(`${worker.url}/auth/user`, { headers: { authorization: `Bearer ${bob.token}` } })
    ).json()) as { role: string; email_verified: boolean }
    expect(account).toMatchObject({ role: 'admin', email_verified: true })

    await page.locator(`#admin-users tr[data-id="${bob.id}"] button[data-action=open]`).click()
    await page.waitForSelector('#admin-user:not([hidden])', { timeout: WAIT_MS })
    expect(new URL(page.url()).hash).toBe(`#admin/${bob.id}`)
    const showsBob = async () => {
      expect(await page.textContent('#admin-user-title')).toBe(`${bob.email} (admin, verified)`)
      // notes.txt, its PNG, and broken.jpg.
      const names = await page.locator('#admin-files tr td:first-child').allTextContents()
      expect(names).toEqual(expect.arrayContaining(['notes.txt', 'broken.jpg']))
      expect(names).toHaveLength(3)
      const jobs = await page
        .locator('#admin-jobs tr')
        .evaluateAll((rows) => rows.map((row) => (row as unknown as { dataset: { status: string } }).dataset.status))
      expect(jobs.sort()).toEqual(['done', 'failed'])
      expect(await page.textContent('#admin-jobs tr[data-status=failed] .job-state')).toMatch(/^failed: [A-Z_]+ · .+/)
      expect(await page.locator('#admin-sessions tr').count()).toBeGreaterThanOrEqual(1)
    }
    await showsBob()
    // The user opened is in the address: a reload shows the same.
    await page.reload()
    await page.waitForSelector('#admin-user:not([hidden])', { timeout: WAIT_MS })
    await showsBob()
    await page.screenshot({ path: `${SHOTS}/admin.png`, fullPage: true })

    // Ending Bob's session ends his token at once.
    const sessions = await page.locator('#admin-sessions tr').count()
    await page.locator('#admin-sessions tr button[data-action=end-session]').first().click()
    await expect.poll(() => page.locator('#admin-sessions tr').count()).toBe(sessions - 1)
    expect(await userStatus(bob.token)).toBe(401)

    page.once('dialog', (dialog) => dialog.accept())
    await page.locator(`#admin-users tr[data-id="${bob.id}"] button[data-action=delete]`).click()
    await page.locator(`#admin-users tr[data-id="${bob.id}"]`).waitFor({ state: 'detached', timeout: WAIT_MS })
    expect(await page.textContent('#admin-message')).toBe(`Deleted ${bob.email}.`)
    expect(
      (await fetchJson(worker.url, 'POST', '/auth/login', { json: { email: bob.email, password: PASSWORD } })).status,
    ).toBe(401)
    expect(errors).toEqual([])
    await page.close()
  })

  it('gives a user who is not an admin no admin screen, even by its address', async () => {
    const { page, errors } = await openPage(browser(), `${worker.url}/console#admin`)
    await registerInConsole(page, uniqueEmail('console-not-admin'))
    expect(await page.isHidden('#tab-admin')).toBe(true)
    await page.waitForSelector('#files-panel:not([hidden])')
    expect(await page.isHidden('#admin-panel')).toBe(true)
    expect(errors).toEqual([])
    await page.close()
  })
})
