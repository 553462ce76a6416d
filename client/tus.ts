// Resumable uploads over tus 1.0.0 (https://tus.io/protocols/resumable-upload), the protocol /files/tus speaks:
// creation, then PATCHes of at most `chunkBytes` (under Cloudflare's request body limit), each resumable from the
// offset HEAD reports after a failure. Only the core protocol and `creation` are used, so any tus server that
// answers X-Edgefloor-File-Id works the same.

/** How the client talks HTTP: an authenticated request (the token added, refreshed when it expired), and how a
 * failed answer becomes its typed error. */
export interface Http {
  send(
    method: string,
    url: string,
    init: { headers?: Record<string, string>; body?: Blob | Uint8Array; signal?: AbortSignal },
  ): Promise<Response>
  errorOf(response: Response): Promise<Error>
}

export interface ResumableOptions {
  /** Bytes per PATCH: at most Cloudflare's request body limit (100 MB on Free and Pro). Default 50 MiB. */
  chunkBytes?: number
  /** An upload URL from an earlier `onUploadUrl`: asks the server for its offset and sends only the rest. */
  uploadUrl?: string
  /** Called once the upload exists, with its URL: keep it to resume after a crash or a reload. */
  onUploadUrl?: (url: string) => void
  /** Called after each PATCH with the bytes the server has. */
  onProgress?: (sentBytes: number, totalBytes: number) => void
  /** How often one chunk is tried again after a network error or a 5xx before giving up. Default 3. */
  retries?: number
  signal?: AbortSignal
}

export interface TusFile {
  content: Blob
  metadata: Record<string, string>
}

const TUS = { 'tus-resumable': '1.0.0' }
const DEFAULT_CHUNK_BYTES = 50 * 1024 * 1024

/** Uploads `file` to the tus endpoint and answers the id of the file record the last PATCH made. */
export async function uploadWithTus(
  http: Http,
  endpoint: string,
  file: TusFile,
  options: ResumableOptions = {},
): Promise<string> {
  const total = file.content.size
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES
  if (!(chunkBytes >= 1)) throw new RangeError('chunkBytes must be at least 1')
  let url = options.uploadUrl
  let state = url ? await readOffset(http, url, options.signal) : undefined
  if (!state) {
    url = await createUpload(http, endpoint, file, options.signal)
    options.onUploadUrl?.(url)
    state = { offset: 0 }
  }
  let failures = 0
  while (state.fileId === undefined) {
    if (state.offset >= total && total > 0) throw new Error(`the upload has all ${total} bytes but names no file`)
    const end = Math.min(total, state.offset + chunkBytes)
    try {
      const response = await http.send('PATCH', url!, {
        headers: { ...TUS, 'upload-offset': String(state.offset), 'content-type': 'application/offset+octet-stream' },
        body: new Uint8Array(await file.content.slice(state.offset, end).arrayBuffer()),
        signal: options.signal,
      })
      if (response.status >= 500 || response.status === 409) throw new RetryableStatus(response)
      if (!response.ok) throw await http.errorOf(response)
      await response.body?.cancel()
      state = {
        offset: Number(response.headers.get('upload-offset') ?? end),
        fileId: response.headers.get('x-edgefloor-file-id') ?? undefined,
      }
      failures = 0
    } catch (error) {
      // A lost connection or a server hiccup: the server kept what arrived; ask it where to go on from.
      if (
        options.signal?.aborted ||
        failures >= (options.retries ?? 3) ||
        !(error instanceof RetryableStatus || error instanceof TypeError)
      )
        throw error instanceof RetryableStatus ? await http.errorOf(error.response) : error
      failures += 1
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** failures))
      const current = await readOffset(http, url!, options.signal)
      if (!current) throw new Error('the upload expired or was removed on the server: start it again')
      state = current
    }
    options.onProgress?.(state.offset, total)
  }
  return state.fileId
}

/** tus `Upload-Metadata`: comma-separated "key base64(UTF-8 value)" pairs. */
export function encodeMetadata(metadata: Record<string, string>): string {
  return Object.entries(metadata)
    .map(([key, value]) => `${key} ${base64(new TextEncoder().encode(value))}`)
    .join(',')
}

function base64(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

async function createUpload(http: Http, endpoint: string, file: TusFile, signal?: AbortSignal): Promise<string> {
  const response = await http.send('POST', endpoint, {
    headers: { ...TUS, 'upload-length': String(file.content.size), 'upload-metadata': encodeMetadata(file.metadata) },
    signal,
  })
  if (response.status !== 201) throw await http.errorOf(response)
  await response.body?.cancel()
  const location = response.headers.get('location')
  if (!location) throw new Error('the tus server created an upload without a Location')
  return new URL(location, endpoint).href
}

/** HEAD: the server's offset, and the file once complete; undefined when the upload is gone (404, 410). */
async function readOffset(
  http: Http,
  url: string,
  signal?: AbortSignal,
): Promise<{ offset: number; fileId?: string } | undefined> {
  const response = await http.send('HEAD', url, { headers: TUS, signal })
  if (response.status === 404 || response.status === 410) return undefined
  if (!response.ok) throw await http.errorOf(response)
  return {
    offset: Number(response.headers.get('upload-offset') ?? 0),
    fileId: response.headers.get('x-edgefloor-file-id') ?? undefined,
  }
}

class RetryableStatus extends Error {
  constructor(readonly response: Response) {
    super(`HTTP ${response.status}`)
  }
}
