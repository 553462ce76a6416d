// The console in headless Chromium against the real Worker (`wrangler dev --local`) and
// the real sidecar (LibreOffice): sign up, upload a JPEG with the progress bar, convert it, watch the job end and
// the PNG thumbnail appear; convert a DOCX, follow its job events live and see the PDF by its first PNG page.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { root } from '../../bench/wrangler-dev.ts'
import { DASHBOARD_FILE_INPUT, launchChromium, openPage as openBrowserPage } from './chromium.ts'
import { artifactsDir, photoJpeg, START_MS, uniqueEmail, waitForServers } from './dev-worker.ts'

const WAIT_MS = 60_000

/** The fields of an <img> read in the page (the Node project has no DOM types). */
interface ImageLike {
  complete: boolean
  naturalWidth: number
  naturalHeight: number
}

/** The run's Worker (test/setup/dev-worker.ts), converting Office documents with the sidecar started beside it. */
const worker = { url: inject('devWorkerUrl') }
let browser: Browser

beforeAll(async () => {
  ;[browser] = await Promise.all([launchChromium(), waitForServers(worker.url, inject('devSidecarUrl'))])
}, START_MS)

afterAll(async () => {
  await browser?.close()
})

const openPage = (path: string) => openBrowserPage(browser, `${worker.url}${path}`)

async function signUp(page: Page): Promise<string> {
  const email = uniqueEmail('console')
  await page.fill('#auth-form input[name=email]', email)
  await page.fill('#auth-form input[name=password]', 'a long enough password')
  await page.fill('#auth-form input[name=name]', 'Console Test')
  await page.click('#auth-form button[value=register]')
  await page.waitForSelector('#files-panel:not([hidden])', { timeout: WAIT_MS })
  await expect.poll(() => page.textContent('#who')).toBe(email)
  return email
}

/** Waits until `scope` has thumbnails and every one of them has loaded, and answers their natural sizes. */
async function loadedSizes(scope: ReturnType<Page['locator']>) {
  const sizes = () =>
    scope.locator('img.thumbnail').evaluateAll((images) =>
      images.map((image) => ({
        complete: (image as ImageLike).complete,
        width: (image as ImageLike).naturalWidth,
        height: (image as ImageLike).naturalHeight,
      })),
    )
  // At least one image, all loaded: a figure can be in the page before its thumbnail is (and every() of none is true).
  const allLoaded = async () => {
    const all = await sizes()
    return all.length > 0 && all.every((size) => size.complete && size.width > 0)
  }
  await expect.poll(allLoaded, { timeout: WAIT_MS }).toBe(true)
  return sizes()
}

/** Picks a file in Uppy's Dashboard (which uploads it at once, over tus) and waits for its record in the list. */
async function pickFile(page: Page, file: { name: string; mimeType: string; buffer: Buffer }) {
  await page.setInputFiles(DASHBOARD_FILE_INPUT, file)
  const item = page.locator('.file', { hasText: file.name })
  await item.waitFor({ timeout: WAIT_MS })
  return item
}

async function uploadPhoto(page: Page) {
  const item = await pickFile(page, { name: 'photo.jpg', mimeType: 'image/jpeg', buffer: Buffer.from(photoJpeg()) })
  await page.locator('.uppy-Dashboard-Item.is-complete', { hasText: 'photo.jpg' }).waitFor({ timeout: WAIT_MS })
  expect(await page.textContent('#upload-message')).toBe('Uploaded photo.jpg (2.2 KiB)')
  expect(await item.locator('.file-meta').textContent()).toBe('.jpg · image/jpeg · 2.2 KiB')
  return item
}

describe('/console in Chromium', () => {
  it('creates an account, keeps the token in sessionStorage only, and signs out', async () => {
    const { page } = await openPage('/console')
    await page.waitForSelector('#auth-panel:not([hidden])')
    await signUp(page)
    const storage = await page.evaluate(() => ({
      session: Object.keys(sessionStorage),
      local: Object.keys(localStorage),
    }))
    expect(storage).toEqual({ session: ['edgefloor.token'], local: [] })
    await page.click('#sign-out')
    await page.waitForSelector('#auth-panel:not([hidden])')
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    await page.close()
  })

  it('tells why a sign-in failed', async () => {
    const { page } = await openPage('/console')
    await page.fill('#auth-form input[name=email]', uniqueEmail('nobody'))
    await page.fill('#auth-form input[name=password]', 'a long enough password')
    await page.click('#auth-form button[value=login]')
    await expect.poll(() => page.textContent('#auth-message')).not.toBe('')
    expect(await page.getAttribute('#auth-message', 'class')).toContain('error')
    await page.close()
  })

  it('uploads a JPEG with the progress bar, lists it after a reload, downloads and deletes it', async () => {
    const { page, errors } = await openPage('/console')
    await signUp(page)
    await uploadPhoto(page)
    const item = page.locator('.file', { hasText: 'photo.jpg' })
    await page.reload()
    await item.waitFor({ timeout: WAIT_MS })

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      item.locator('[data-action=download]').click(),
    ])
    expect(download.suggestedFilename()).toBe('photo.jpg')
    expect(new Uint8Array(readFileSync((await download.path())!))).toEqual(photoJpeg())

    page.once('dialog', (dialog) => dialog.accept())
    await item.locator('[data-action=delete]').click()
    await item.waitFor({ state: 'detached', timeout: WAIT_MS })
    // The upload's own conversion may still be storing its PNG when the JPEG goes: that step finds its source gone
    // and removes what it stored (docs/files-and-uploads.md), so the list is empty once it has.
    await expect
      .poll(
        async () => {
          await page.reload()
          return page.isVisible('#files-empty:not([hidden])')
        },
        { timeout: WAIT_MS },
      )
      .toBe(true)
    expect(errors).toEqual([])
    await page.close()
  })

  it('shows why a conversion was refused', async () => {
    const { page } = await openPage('/console')
    await signUp(page)
    const item = await pickFile(page, {
      name: 'notes.bin',
      mimeType: 'application/octet-stream',
      buffer: Buffer.from('not convertible'),
    })
    await item.locator('[data-action=convert]').click()
    await item.locator('.job-status.failed').waitFor({ timeout: WAIT_MS })
    expect(await item.locator('.job-status').textContent()).toMatch(/^failed: .+/)
    expect(await item.locator('[data-action=convert]').isEnabled()).toBe(true)
    await page.close()
  })

  it('lists a failed job with its error code and message, and its failed step, after a reload', async () => {
    const { page, errors } = await openPage('/console')
    await signUp(page)
    // A JPEG's first bytes and then nothing a decoder can read: a job that starts and fails.
    const broken = Buffer.from([0xff, 0xd8, 0xff, 0xe0, ...Buffer.from('not the rest of a JPEG')])
    const item = await pickFile(page, { name: 'broken.jpg', mimeType: 'image/jpeg', buffer: broken })
    await item.locator('[data-action=convert]').click()
    await item.locator('.job-status.failed').first().waitFor({ timeout: WAIT_MS })
    await page.reload()
    const failed = item.locator('.jobs-list li.job-entry[data-status=failed]')
    await failed.waitFor({ state: 'attached', timeout: WAIT_MS })
    expect(await failed.locator('.job-state').textContent()).toMatch(/^failed: [A-Z_]+ · .+/)
    expect(await failed.locator('.job-steps li.failed').count()).toBe(1)
    expect(await item.locator('.outputs figure.output').count()).toBe(0)
    expect(errors.filter((error) => !/the server responded with a status of 4\d\d/.test(error))).toEqual([])
    await page.close()
  })

  it('converts the JPEG and shows the PNG thumbnail', async () => {
    const { page, errors } = await openPage('/console')
    await signUp(page)
    const item = await uploadPhoto(page)
    await item.locator('[data-action=convert]').click()
    await item.locator('.job-status.done').waitFor({ timeout: WAIT_MS })
    // The file's own preview (GET /files/:id/preview through its signed preview_url, 128 px box, never enlarged).
    const preview = item.locator('.file-head img.thumbnail.preview')
    await preview.waitFor({ timeout: WAIT_MS })
    await expect
      .poll(
        () =>
          preview.evaluate((image) => ({
            complete: (image as ImageLike).complete,
            width: (image as ImageLike).naturalWidth,
            height: (image as ImageLike).naturalHeight,
          })),
        { timeout: WAIT_MS },
      )
      .toEqual({ complete: true, width: 128, height: 96 })
    // The conversion's PNG output beside it.
    const thumbnail = item.locator('figure.output img.thumbnail')
    await thumbnail.waitFor({ timeout: WAIT_MS })
    const naturalSize = () =>
      thumbnail.evaluate((image) => ({
        complete: (image as ImageLike).complete,
        width: (image as ImageLike).naturalWidth,
        height: (image as ImageLike).naturalHeight,
      }))
    await expect.poll(naturalSize).toEqual({ complete: true, width: 160, height: 120 })
    const progress = item.locator('.job-progress')
    expect(await progress.getAttribute('data-followed-by')).toBe('events')
    expect(Number(await progress.getAttribute('data-events'))).toBeGreaterThanOrEqual(1)

    await page.screenshot({ path: join(artifactsDir, 'console.png'), clip: { x: 0, y: 0, width: 1100, height: 520 } })
    // The docs' copy is refreshed on request only, so a test run leaves the work tree clean.
    if (process.env.UPDATE_DOCS_SCREENSHOT === '1' || !existsSync(join(root, 'docs', 'console.png'))) {
      mkdirSync(join(root, 'docs'), { recursive: true })
      copyFileSync(join(artifactsDir, 'console.png'), join(root, 'docs', 'console.png'))
    }
    expect(errors).toEqual([])
    await page.close()
  })
})

describe('/console converting an Office document in Chromium', () => {
  it('converts a DOCX through the sidecar, follows the job events live, and shows the PDF by its first PNG page', async () => {
    const { page, errors } = await openPage('/console')
    await signUp(page)
    const docx = readFileSync(join(inject('officeDocumentsDir'), 'hello.docx'))
    const item = await pickFile(page, {
      name: 'hello.docx',
      mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      buffer: docx,
    })

    await item.locator('[data-action=convert]').click()
    await item.locator('.job-status.done').waitFor({ timeout: WAIT_MS })
    const progress = item.locator('.job-progress')
    // The end of the chain came through GET /jobs/:id/events, not the polling fallback.
    await expect.poll(() => progress.getAttribute('data-followed-by')).toBe('events')
    expect(Number(await progress.getAttribute('data-events'))).toBeGreaterThanOrEqual(1)
    expect(await progress.evaluate((element) => (element as unknown as { value: number }).value)).toBe(1)

    // The PDF the pages were rendered from, the one with outputs of its own (the tree shows every PDF made from the
    // upload: one a preview asked for before the conversion reused it would be a second, without pages).
    const pdf = item.locator('li:has(> ul.tree) > figure.output[data-extension=".pdf"]')
    const pages = item.locator('figure.output[data-extension=".png"]')
    await expect.poll(() => pages.count(), { timeout: WAIT_MS }).toBe(1)
    expect(await pdf.locator('figcaption').textContent()).toContain('.pdf')
    const pageSizes = await loadedSizes(pages)
    expect(pageSizes).toHaveLength(1)
    // A4 portrait, rendered: taller than wide.
    expect(pageSizes[0]!.height).toBeGreaterThan(pageSizes[0]!.width)
    const [cover] = await loadedSizes(pdf)
    expect(cover).toEqual(pageSizes[0])
    const firstPageId = await pages.first().getAttribute('data-id')
    expect(await pdf.locator('img.thumbnail').getAttribute('data-source')).toBe(firstPageId)
    await page.screenshot({ path: join(artifactsDir, 'console-docx.png'), fullPage: true })

    // After a reload the PDF is found among the upload's children and its page among the PDF's.
    await page.reload()
    await item.waitFor({ timeout: WAIT_MS })
    await loadedSizes(pdf)
    expect(await pdf.locator('img.thumbnail').getAttribute('data-source')).toBe(firstPageId)
    // The whole tree (GET /files/:id/tree), not only the upload's children: the page is still there, under its PDF.
    const nestedPages = item.locator('ul.tree[data-depth="2"] figure.output[data-extension=".png"]')
    await expect.poll(() => nestedPages.count()).toBe(1)
    expect(await nestedPages.first().getAttribute('data-id')).toBe(firstPageId)
    // And the jobs that made it, from the API: the conversion's, done, with its steps.
    const done = item.locator('.jobs-list li.job-entry[data-status=done]')
    expect(await done.count()).toBeGreaterThanOrEqual(1)
    expect(await done.first().locator('.job-steps li').count()).toBeGreaterThanOrEqual(2)
    await item.locator('.jobs summary').click()
    await page.screenshot({ path: '/tmp/console-shots/console-docx-tree.png', fullPage: true })
    expect(errors).toEqual([])
    await page.close()
  })
})
