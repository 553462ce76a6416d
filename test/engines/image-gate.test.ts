// Image → PNG and previews agree on which images are hostile (one decoder gate, worker/engines/image/decode.ts):
// the same PNG is refused by both or taken by both, through the real routes. The two PNGs of issue 31: one whose
// IDAT inflates to 200 MiB (its rows need 1 MB), and one carrying a 200 MiB iCCP profile (PNG 1.2, §4.2.2.4: "iCCP
// … compressed profile", deflated like IDAT). Chunks carry real CRCs (PNG §5.3), as a decoder that checks them needs.
import { crc32 } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { call, callJson } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { concatBytes } from '../support/bytes'
import { uploaded } from '../support/files'
import { deflate, deflatedZeros } from '../hostile/corpus'

const encoder = new TextEncoder()
const u32be = (value: number) => [(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff]

function chunk(type: string, data: Uint8Array): Uint8Array {
  const typed = new Uint8Array([...encoder.encode(type), ...data])
  return new Uint8Array([...u32be(data.length), ...typed, ...u32be(crc32(typed))])
}

function png(width: number, height: number, colourType: number, ...chunks: Uint8Array[]): Uint8Array {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  return concatBytes(
    signature,
    chunk('IHDR', new Uint8Array([...u32be(width), ...u32be(height), 8, colourType, 0, 0, 0])),
    ...chunks,
    chunk('IEND', new Uint8Array()),
  )
}

/** A 1000 × 1000 gray PNG whose IDAT inflates to 200 MiB of zero rows (filter 0, black), 1,001,000 bytes of them its own. */
async function idatBomb() {
  return png(1000, 1000, 0, chunk('IDAT', await deflatedZeros(200)))
}

/** A 64 × 64 RGB picture with a 200 MiB iCCP profile ("bomb", compression method 0). */
async function iccpBomb() {
  const rows = new Uint8Array(64 * (1 + 64 * 3)).map((_, i) => (i % 193 === 0 ? 0 : (i * 31) & 0xff))
  for (let y = 0; y < 64; y++) rows[y * (1 + 64 * 3)] = 0
  const profile = new Uint8Array([...encoder.encode('bomb'), 0, 0, ...(await deflatedZeros(200)).subarray(2)])
  return png(64, 64, 2, chunk('iCCP', profile), chunk('IDAT', await deflate(rows)))
}

/** The preview once drawn or refused (a 202 is asked again). */
async function previewStatus(user: TestUser, fileId: string) {
  const deadline = Date.now() + 120_000
  for (;;) {
    const res = await call('GET', `/files/${fileId}/preview?w=256&format=png`, { token: user.token })
    const body = await res.text()
    if (res.status !== 202 || Date.now() > deadline)
      return { status: res.status, code: res.status === 200 ? undefined : JSON.parse(body).code }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

async function convertStatus(user: TestUser, fileId: string) {
  const res = await callJson('POST', `/files/${fileId}/convert`, { token: user.token })
  return { status: res.status, code: res.body?.code }
}

describe('one decoder gate for image → PNG and previews', { timeout: 180_000 }, () => {
  it('a PNG whose IDAT inflates to 200 MiB: refused by both with 422 CONVERSION_FAILED', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'idat-bomb.png', await idatBomb())
    const converted = await convertStatus(user, file._id)
    const previewed = await previewStatus(user, file._id)
    expect(converted).toEqual({ status: 422, code: 'CONVERSION_FAILED' })
    expect(previewed).toEqual(converted)
  })

  it('a PNG with a 200 MiB iCCP profile: taken by both (the profile is never inflated)', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'iccp-bomb.png', await iccpBomb())
    const converted = await convertStatus(user, file._id)
    const previewed = await previewStatus(user, file._id)
    expect(converted.status).toBe(200)
    expect(previewed.status).toBe(200)
  })
})
