// Uppy (@uppy/core, @uppy/dashboard, @uppy/tus, bundled into the console by .ci/build-console.ts) in headless
// Chromium against the real Worker (`wrangler dev --local`): a file picked in the console's Dashboard goes to
// /files/tus in several PATCHes of sizes R2 refuses as parts, is paused and resumed (Uppy's per-file button, tus
// 1.0.0 "Resuming an upload": HEAD for the offset, then PATCH from it), survives a reload (tus-js-client's URL in
// localStorage), and ends as the same record, with the same SHA-256, as the bytes picked.
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page, Route } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { DASHBOARD_FILE_INPUT, launchChromium, openPage } from './chromium.ts'
import { START_MS, uniqueEmail, waitForServers } from './dev-worker.ts'

const WAIT_MS = 90_000
const MIB = 1024 * 1024
/**
 * Uppy's chunkSize for these tests: 3 MiB + 1 byte, so each PATCH is smaller than R2's 5 MiB minimum part and
 * not a multiple of anything R2 accepts (R2: parts of at least 5 MiB, all of one size but the last). The Worker
 * cuts the bytes into its own parts; the client never needs to know.
 */
const CHUNK_BYTES = 3 * MIB + 1
/** Four PATCHes: three of CHUNK_BYTES and a last one of 1 MiB + 2 bytes. */
const FILE_BYTES = 10 * MIB + 5
/** A name the Upload-Metadata carries as Base64 UTF-8 (tus 1.0.0), with a space and a non-ASCII letter. */
const FILE_NAME = 'Field recording – take 2.bin'

/** The run's Worker (test/setup/dev-worker.ts), which serves the console and its Uppy bundle. */
const worker = { url: inject('devWorkerUrl') }
let browser: Browser
let directory: string
let filePath: string
let fileSha256: string

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'edgefloor-uppy-'))
  filePath = join(directory, FILE_NAME)
  const bytes = Buffer.alloc(FILE_BYTES)
  // Bytes no sniffer recognises (a linear congruential sequence), so the record stays application/octet-stream.
  let state = 0x2545f491
  for (let i = 0; i < bytes.length; i++) bytes[i] = (state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 24
  writeFileSync(filePath, bytes)
  // A fixed modification time: Uppy's file id (and so the tus fingerprint) includes lastModified, and the record's
  // file_modified_at must be this.
  utimesSync(filePath, new Date('2026-01-02T03:04:05Z'), new Date('2026-01-02T03:04:05Z'))
  fileSha256 = createHash('sha256').update(bytes).digest('hex')
  ;[browser] = await Promise.all([launchChromium(), waitForServers(worker.url)])
}, START_MS)

afterAll(async () => {
  await browser?.close()
  if (directory) rmSync(directory, { recursive: true, force: true })
})

interface Account {
  email: string
  password: string
}

/** An account made through the API; the test then signs in through the console's form. */
async function register(): Promise<Account> {
  const account = { email: uniqueEmail('uppy'), password: 'a long enough password' }
  const response = await fetch(`${worker.url}/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(account),
  })
  expect(response.status).toBe(201)
  return account
}

async function signIn(page: Page, account: Account): Promise<string> {
  await page.fill('#auth-form input[name=email]', account.email)
  await page.fill('#auth-form input[name=password]', account.password)
  await page.click('#auth-form button[value=login]')
  await page.waitForSelector('#files-panel:not([hidden])', { timeout: WAIT_MS })
  await expect.poll(() => page.textContent('#who'), { timeout: WAIT_MS }).toBe(account.email)
  return (await page.evaluate(() => sessionStorage.getItem('edgefloor.token')))!
}

/** The console's Uppy takes 50 MiB chunks (Cloudflare's request body limit); these tests want several PATCHes. */
async function useChunkSize(page: Page) {
  await page.waitForFunction(() => 'uppy' in globalThis)
  await page.evaluate(
    (chunkSize) =>
      (globalThis as unknown as { uppy: { getPlugin(name: string): { setOptions(options: object): void } } }).uppy
        .getPlugin('Tus')
        .setOptions({ chunkSize }),
    CHUNK_BYTES,
  )
}

interface TusExchange {
  method: string
  status: number
  requestOffset?: string
  responseOffset?: string
  metadata?: string
}

/**
 * Records every tus request that got an answer, and holds the PATCH numbered `holdPatch` (1-based) unanswered
 * until the test lets it go, so a pause or reload lands mid-upload at a known offset on any machine speed.
 */
async function watchTus(page: Page, holdPatch: number) {
  const exchanges: TusExchange[] = []
  page.on('response', (response) => {
    const request = response.request()
    if (!new URL(request.url()).pathname.startsWith('/files/tus')) return
    const headers = request.headers()
    exchanges.push({
      method: request.method(),
      status: response.status(),
      requestOffset: headers['upload-offset'],
      responseOffset: response.headers()['upload-offset'],
      metadata: headers['upload-metadata'],
    })
  })
  let patches = 0
  let heldRoute: (route: Route) => void
  const held = new Promise<Route>((resolve) => (heldRoute = resolve))
  await page.route('**/files/tus/*', async (route) => {
    if (route.request().method() === 'PATCH' && ++patches === holdPatch) return heldRoute(route)
    await route.fallback()
  })
  return { exchanges, held }
}

/** The offsets the server answered to PATCHes it accepted, in order. */
const storedOffsets = (exchanges: TusExchange[]) =>
  exchanges
    .filter((exchange) => exchange.method === 'PATCH' && exchange.status === 204)
    .map((exchange) => Number(exchange.responseOffset))

/** tus-js-client's saved uploads in localStorage ("tus::<fingerprint>::<n>" → { uploadUrl, size, … }). */
async function savedUploads(page: Page): Promise<{ uploadUrl: string; size: number }[]> {
  return page.evaluate(() =>
    Object.keys(localStorage)
      .filter((key) => key.startsWith('tus::'))
      .map((key) => JSON.parse(localStorage.getItem(key)!)),
  )
}

async function serverOffset(uploadUrl: string, token: string): Promise<number> {
  const response = await fetch(uploadUrl, {
    method: 'HEAD',
    headers: { authorization: `Bearer ${token}`, 'tus-resumable': '1.0.0' },
  })
  expect(response.status).toBe(200)
  return Number(response.headers.get('upload-offset'))
}

/** The record listed in the console, fetched with its bytes: both must be the file's. */
async function expectStoredFile(page: Page, token: string) {
  const item = page.locator('.file', { hasText: FILE_NAME })
  await item.waitFor({ timeout: WAIT_MS })
  expect(await item.locator('.file-meta').textContent()).toBe('.bin · application/octet-stream · 10.0 MiB')
  const id = (await item.getAttribute('data-id'))!
  const auth = { authorization: `Bearer ${token}` }
  const record = (await (await fetch(`${worker.url}/files/${id}`, { headers: auth })).json()) as Record<string, unknown>
  expect(record).toMatchObject({
    name: FILE_NAME,
    size: FILE_BYTES,
    hash: fileSha256,
    file_modified_at: '2026-01-02T03:04:05.000Z',
  })
  const download = await fetch(`${worker.url}/files/${id}/download`, { headers: auth })
  expect(
    createHash('sha256')
      .update(Buffer.from(await download.arrayBuffer()))
      .digest('hex'),
  ).toBe(fileSha256)
}

/** Signs a new account in through the console, and picks the file in the Dashboard with PATCH `holdPatch` held. */
async function startUpload(holdPatch: number) {
  const account = await register()
  const { page, errors } = await openPage(browser, `${worker.url}/console`)
  const token = await signIn(page, account)
  await useChunkSize(page)
  const { exchanges, held } = await watchTus(page, holdPatch)
  await page.setInputFiles(DASHBOARD_FILE_INPUT, filePath)
  return { page, errors, token, exchanges, heldPatch: await held }
}

const dashboardItem = (page: Page) => page.locator('.uppy-Dashboard-Item', { hasText: FILE_NAME })

describe('the console uploads through Uppy (Dashboard + tus) in Chromium', () => {
  it('sends the file in PATCHes R2 would refuse as parts, shows progress, pauses, resumes and lists the record', async () => {
    const { page, errors, token, exchanges, heldPatch: secondPatch } = await startUpload(2)
    // The first PATCH is stored: the Dashboard's status bar and the file's own progress show it.
    const progressBar = page.locator('.uppy-StatusBar [role=progressbar]')
    await expect
      .poll(async () => Number(await progressBar.getAttribute('aria-valuenow')), { timeout: WAIT_MS })
      .toBeGreaterThanOrEqual(Math.floor((CHUNK_BYTES / FILE_BYTES) * 100))
    expect(Number(await progressBar.getAttribute('aria-valuenow'))).toBeLessThan(100)
    expect(storedOffsets(exchanges)).toEqual([CHUNK_BYTES])
    const [saved] = await savedUploads(page)
    expect(saved).toMatchObject({ size: FILE_BYTES, uploadUrl: expect.stringContaining(`${worker.url}/files/tus/`) })

    // Pause with the file's own button: Uppy aborts the PATCH in flight; the server keeps what it had.
    const pauseResume = dashboardItem(page).locator('.uppy-Dashboard-Item-progressIndicator')
    expect(await pauseResume.getAttribute('aria-label')).toBe('Pause upload')
    await pauseResume.click()
    await expect.poll(() => pauseResume.getAttribute('aria-label')).toBe('Resume upload')
    await secondPatch.abort().catch(() => {}) // already cancelled by the pause, as a rule
    await page.unrouteAll({ behavior: 'ignoreErrors' })
    expect(await serverOffset(saved!.uploadUrl, token)).toBe(CHUNK_BYTES)

    await pauseResume.click()
    await dashboardItem(page).and(page.locator('.is-complete')).waitFor({ timeout: WAIT_MS })
    await expectStoredFile(page, token)

    // One creation; the resume asked HEAD for the offset and went on from it; every PATCH carried at most a chunk.
    expect(exchanges.filter((exchange) => exchange.method === 'POST')).toHaveLength(1)
    const metadata = Object.fromEntries(
      exchanges
        .find((exchange) => exchange.method === 'POST')!
        .metadata!.split(',')
        .map((pair) => pair.split(' '))
        .map(([key, value]) => [key, Buffer.from(value ?? '', 'base64').toString('utf8')]),
    )
    expect(metadata).toEqual({
      filename: FILE_NAME,
      filetype: 'application/octet-stream',
      modified: String(Date.parse('2026-01-02T03:04:05Z')),
    })
    expect(
      exchanges.some((exchange) => exchange.method === 'HEAD' && exchange.responseOffset === String(CHUNK_BYTES)),
    ).toBe(true)
    expect(storedOffsets(exchanges)).toEqual([CHUNK_BYTES, 2 * CHUNK_BYTES, 3 * CHUNK_BYTES, FILE_BYTES])
    // removeFingerprintOnSuccess: a finished upload leaves nothing in localStorage.
    expect(await savedUploads(page)).toEqual([])
    expect(await page.textContent('#upload-message')).toBe(`Uploaded ${FILE_NAME} (10.0 MiB)`)
    expect(errors).toEqual([])
    await page.close()
  })

  it('resumes after a reload: the same file picked again continues from the server offset (the URL kept in localStorage)', async () => {
    const { page, errors, token, exchanges, heldPatch: thirdPatch } = await startUpload(3)
    expect(storedOffsets(exchanges)).toEqual([CHUNK_BYTES, 2 * CHUNK_BYTES])
    const before = await savedUploads(page)
    expect(before).toHaveLength(1)

    // The reload cancels the PATCH in flight; the access token (sessionStorage) and the upload URL (localStorage)
    // survive it.
    await page.reload()
    await thirdPatch.abort().catch(() => {})
    await page.unrouteAll({ behavior: 'ignoreErrors' })
    await page.waitForSelector('#files-panel:not([hidden])', { timeout: WAIT_MS })
    expect(await serverOffset(before[0]!.uploadUrl, token)).toBe(2 * CHUNK_BYTES)
    expect(await savedUploads(page)).toEqual(before)
    const sentBeforeReload = exchanges.length

    await useChunkSize(page)
    await page.setInputFiles(DASHBOARD_FILE_INPUT, filePath)
    await dashboardItem(page).and(page.locator('.is-complete')).waitFor({ timeout: WAIT_MS })
    await expectStoredFile(page, token)

    // No new upload was created: HEAD on the saved URL, then PATCHes from its offset to the end.
    const afterReload = exchanges.slice(sentBeforeReload)
    expect(afterReload.map((exchange) => exchange.method)).toEqual(['HEAD', 'PATCH', 'PATCH'])
    expect(afterReload[0]!.responseOffset).toBe(String(2 * CHUNK_BYTES))
    expect(afterReload.slice(1).map((exchange) => Number(exchange.requestOffset))).toEqual([
      2 * CHUNK_BYTES,
      3 * CHUNK_BYTES,
    ])
    expect(storedOffsets(exchanges)).toEqual([CHUNK_BYTES, 2 * CHUNK_BYTES, 3 * CHUNK_BYTES, FILE_BYTES])
    expect(await savedUploads(page)).toEqual([])
    expect(errors).toEqual([])
    await page.close()
  })
})
