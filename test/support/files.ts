// Uploads through POST /files as a client would: multipart with the file in "file", X-Edgefloor-* headers.
import { bodyAt, call, callJson } from './api'
import type { TestUser } from './accounts'

export function multipartBody(name: string, bytes: Uint8Array | string, type = 'application/octet-stream'): FormData {
  const form = new FormData()
  form.append('file', new File([bytes], name, { type }))
  return form
}

export async function uploadFile(
  user: TestUser,
  name: string,
  bytes: Uint8Array | string,
  headers: Record<string, string> = {},
) {
  return callJson('POST', '/files', {
    token: user.token,
    body: multipartBody(name, bytes),
    headers: { 'x-edgefloor-name': encodeURIComponent(name), ...headers },
  })
}

export async function uploaded(
  user: TestUser,
  name: string,
  bytes: Uint8Array | string,
  headers: Record<string, string> = {},
) {
  const res = await uploadFile(user, name, bytes, headers)
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${JSON.stringify(res.body)}`)
  return bodyAt(res, 201)
}

export async function downloadBytes(path: string, init: { token?: string; headers?: Record<string, string> } = {}) {
  const res = await call('GET', path, init)
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) }
}

/** A PNG signature followed by filler: enough for the sniffer. */
export const PNG_HEAD = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82])
export const PDF_HEAD = new TextEncoder().encode('%PDF-1.4\n%âãÏÓ\n')
