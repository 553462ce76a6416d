// Gotenberg's downloadFrom form field: [{"url": "...", "extraHttpHeaders": {...}, "embedded": false, "field": ""}],
// each URL fetched by the sidecar (never by LibreOffice) under the download policy, following at most 5 redirects (each
// hop checked again), within a time and size limit; the files join the form as if uploaded (`embeds` when embedded).
import { randomUUID } from 'node:crypto'
import { goJsonError } from '../shared/form-rules.ts'
import { FormError } from './gotenberg-form.ts'
import { checkUrl, OutboundError, sendRequest, type UrlPolicy } from './outbound.ts'

export interface DownloadSettings {
  /** Refuses downloadFrom with a 400 (Gotenberg's --api-disable-download-from). */
  readonly disabled: boolean
  readonly policy: UrlPolicy
  readonly timeoutMs: number
  /** For every download of one request together. */
  readonly maxBytes: number
}

interface DownloadEntry {
  url: string
  extraHttpHeaders: Record<string, string>
  /** The form field the file joins: files, embeds, watermark or stamp (Gotenberg's `field`, and `embedded`). */
  field: string
}

const FIELDS: Readonly<Record<string, string>> = {
  '': 'files',
  embedded: 'embeds',
  watermark: 'watermark',
  stamp: 'stamp',
}

const MAX_DOWNLOADS = 32
const MAX_REDIRECTS = 5

function readEntries(raw: string): DownloadEntry[] {
  const invalid = (why: string) =>
    new FormError(`Invalid form data: form field 'downloadFrom' is invalid (got '${raw}', resulting to ${why})`)
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch (error) {
    throw invalid(`unmarshal downloadFrom: ${goJsonError(raw) ?? (error as Error).message}`)
  }
  if (!Array.isArray(parsed)) throw invalid('downloadFrom must be a JSON array')
  if (parsed.length > MAX_DOWNLOADS) throw invalid(`more than ${MAX_DOWNLOADS} downloads`)
  return parsed.map((entry) => {
    if (typeof entry !== 'object' || entry === null || typeof entry.url !== 'string' || entry.url === '')
      throw invalid("every entry needs a 'url' string")
    const headers = entry.extraHttpHeaders ?? {}
    const validHeaders =
      typeof headers === 'object' &&
      !Array.isArray(headers) &&
      Object.entries(headers).every(
        ([key, value]) =>
          /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key) && typeof value === 'string' && !/[\r\n\0]/.test(value),
      )
    if (!validHeaders) throw invalid("'extraHttpHeaders' must be an object of header names to string values")
    if (entry.embedded !== undefined && typeof entry.embedded !== 'boolean')
      throw invalid("'embedded' must be a boolean")
    const field = entry.field ?? ''
    if (typeof field !== 'string' || !(field in FIELDS))
      throw invalid("'field' must be 'embedded', 'watermark' or 'stamp'")
    return { url: entry.url, extraHttpHeaders: headers, field: entry.embedded === true ? 'embeds' : FIELDS[field]! }
  })
}

/** The file name an answer gives: Content-Disposition's, else the URL path's last segment. */
function fileName(disposition: string | undefined, url: URL): string {
  const star = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(disposition ?? '')?.[1]
  const plain = /filename\s*=\s*"?([^";]+)"?/i.exec(disposition ?? '')?.[1]
  let name = ''
  try {
    name = star ? decodeURIComponent(star) : (plain ?? decodeURIComponent(url.pathname.split('/').pop() ?? ''))
  } catch {}
  return name.split(/[\\/]/).pop()?.trim() || randomUUID()
}

async function download(entry: DownloadEntry, settings: DownloadSettings, budget: { bytes: number }): Promise<File> {
  let url = checkUrl(entry.url, settings.policy)
  for (let hop = 0; ; hop++) {
    const answer = await sendRequest(url, settings.policy, {
      method: 'GET',
      headers: entry.extraHttpHeaders,
      timeoutMs: settings.timeoutMs,
      maxBytes: budget.bytes,
    })
    const location = answer.headers.location
    if (answer.status >= 300 && answer.status < 400 && location) {
      if (hop >= MAX_REDIRECTS) throw new OutboundError(`'${entry.url}' redirects more than ${MAX_REDIRECTS} times`)
      url = checkUrl(new URL(location, url).toString(), settings.policy)
      continue
    }
    if (answer.status < 200 || answer.status > 299) throw new OutboundError(`'${entry.url}' answered ${answer.status}`)
    budget.bytes -= answer.body.byteLength
    return new File([answer.body], fileName(answer.headers['content-disposition'], url))
  }
}

/** Fetches the form's downloadFrom files one by one and adds them to the form. */
export async function addDownloads(form: FormData, settings: DownloadSettings): Promise<void> {
  const raw = form.get('downloadFrom')
  if (typeof raw !== 'string' || raw === '') return
  if (settings.disabled)
    throw new FormError(
      "Invalid form data: form field 'downloadFrom' is not supported by this server (downloads are disabled: SIDECAR_DOWNLOAD_DISABLE)",
    )
  const entries = readEntries(raw)
  const budget = { bytes: settings.maxBytes }
  for (const entry of entries) {
    const file = await download(entry, settings, budget)
    form.append(entry.field, file)
  }
}
