// The standard security handler (ISO 32000-2 §7.6.4: RC4 40–128 bits, AES-128, AES-256 of revisions 5 and 6) as
// PDFium applies it, so that pdf-streams.ts measures an encrypted PDF's streams as PDFium will decode them: the
// same key from the same password (PDFium's order: as the owner's, then as the user's; its fallbacks for encrypted
// metadata and password encodings), and each stream decrypted piece by piece as its filters read it.
// The encryption dictionary and the file ID are found the way pdf-streams.ts finds streams: every `/Encrypt` and
// `/ID [` in the file's bytes, so no trailer can hide one; each pair that opens with the password gives a key.
// node:crypto (workerd's nodejs_compat) does MD5, SHA-2 and AES-CBC in pieces, synchronously; RC4 is a few lines here.
import { createCipheriv, createDecipheriv, createHash } from 'node:crypto'
import {
  isRegular,
  isWhite,
  nameOf,
  ObjectIndex,
  ObjectReader,
  PdfStreamSyntaxError,
  type PdfValue,
  spells,
} from './pdf-streams'

/** The document is encrypted and the password (none, or the one given) opens it neither as owner nor as user. */
export class PdfPasswordError extends Error {
  override readonly name = 'PdfPasswordError'
}

/**
 * The document is encrypted by a handler other than the standard one (public-key, a vendor's): PDFium refuses it too.
 */
export class PdfSecurityHandlerError extends Error {
  override readonly name = 'PdfSecurityHandlerError'
}

/** Decrypts one stream's data a piece at a time (a returned piece is valid until the next call). */
export interface StreamDecryptor {
  update(piece: Uint8Array): Uint8Array
  final(): Uint8Array
}

/** A key the document opens with: a decryptor for each stream, by object and generation number. */
export interface PdfDecryption {
  forStream(object: number, generation: number): StreamDecryptor
}

/** Distinct encryption dictionaries and file IDs looked at, at most: more is refused rather than tried. */
const MAX_CANDIDATES = 8

/** The 32 bytes a password is padded with (ISO 32000-2 §7.6.4.3.2, algorithm 2 step a). */
const PADDING = Uint8Array.from([
  0x28, 0xbf, 0x4e, 0x5e, 0x4e, 0x75, 0x8a, 0x41, 0x64, 0x00, 0x4e, 0x56, 0xff, 0xfa, 0x01, 0x08, 0x2e, 0x2e, 0x00,
  0xb6, 0xd0, 0x68, 0x3e, 0x80, 0x2f, 0x0c, 0xa9, 0xfe, 0x64, 0x53, 0x69, 0x7a,
])

const EMPTY = new Uint8Array()

type Cipher = 'rc4' | 'aes'

/** RC4, keyed once, applied to pieces in turn (the key stream continues from one piece to the next). */
class Rc4 {
  private readonly state = new Uint8Array(256)
  private i = 0
  private j = 0
  constructor(key: Uint8Array) {
    const { state } = this
    for (let i = 0; i < 256; i++) state[i] = i
    for (let i = 0, j = 0; i < 256; i++) {
      j = (j + state[i]! + key[i % key.length]!) & 0xff
      ;[state[i], state[j]] = [state[j]!, state[i]!]
    }
  }

  crypt(input: Uint8Array, output = new Uint8Array(input.length)): Uint8Array {
    const { state } = this
    let { i, j } = this
    for (let k = 0; k < input.length; k++) {
      i = (i + 1) & 0xff
      j = (j + state[i]!) & 0xff
      const swap = state[i]!
      state[i] = state[j]!
      state[j] = swap
      output[k] = input[k]! ^ state[(state[i]! + state[j]!) & 0xff]!
    }
    this.i = i
    this.j = j
    return output
  }
}

const rc4 = (key: Uint8Array, data: Uint8Array) => new Rc4(key).crypt(data)

function digest(algorithm: 'md5' | 'sha256' | 'sha384' | 'sha512', ...parts: Uint8Array[]): Uint8Array {
  const hash = createHash(algorithm)
  for (const part of parts) hash.update(part)
  return new Uint8Array(hash.digest())
}

/** AES-CBC without padding (the input is whole blocks). */
function aesCbc(direction: 'encrypt' | 'decrypt', key: Uint8Array, iv: Uint8Array, data: Uint8Array): Uint8Array {
  const algorithm = `aes-${key.length * 8}-cbc`
  const cipher = direction === 'encrypt' ? createCipheriv(algorithm, key, iv) : createDecipheriv(algorithm, key, iv)
  cipher.setAutoPadding(false)
  return new Uint8Array(Buffer.concat([cipher.update(data), cipher.final()]))
}

const equalBytes = (a: Uint8Array, b: Uint8Array, length: number) =>
  a.length >= length && b.length >= length && a.subarray(0, length).every((byte, i) => byte === b[i])
const littleEndian = (value: number, bytes: number) =>
  Uint8Array.from({ length: bytes }, (_, i) => (value >>> (8 * i)) & 0xff)

/** What PDFium reads from an encryption dictionary (GetIntegerFor, GetByteStringFor, GetBooleanFor). */
class EncryptDictionary {
  constructor(
    private readonly entries: Map<string, PdfValue>,
    private readonly index: ObjectIndex,
  ) {}

  private get(key: string): PdfValue | undefined {
    return this.index.resolve(this.entries.get(key))
  }

  integer(key: string, fallback = 0): number {
    const value = this.get(key)
    return typeof value === 'number' && Number.isFinite(value) ? Math.trunc(value) : fallback
  }

  string(key: string): Uint8Array {
    const value = this.get(key)
    return value && typeof value === 'object' && 'bytes' in value ? value.bytes : EMPTY
  }

  name(key: string): string {
    return nameOf(this.get(key)) ?? ''
  }

  boolean(key: string, fallback: boolean): boolean {
    const value = this.get(key)
    return typeof value === 'boolean' ? value : fallback
  }

  dictionary(key: string): EncryptDictionary | undefined {
    const value = this.get(key)
    return value instanceof Map ? new EncryptDictionary(value, this.index) : undefined
  }
}

/** The cipher and key length PDFium's LoadDict reads, 'none' for /Identity, or undefined when it refuses them. */
function cryptInfo(encrypt: EncryptDictionary): { cipher: Cipher | 'none'; keyLength: number } | undefined {
  const version = encrypt.integer('V')
  let cipher: Cipher | 'none' = 'rc4'
  let keyLength: number
  if (version >= 4) {
    const name = encrypt.name('StmF')
    if (name !== encrypt.name('StrF')) return undefined // PDFium takes one crypt filter for strings and streams
    const filters = encrypt.dictionary('CF')
    if (!filters) return undefined
    if (name === 'Identity') return { cipher: 'none', keyLength: 0 }
    const filter = filters.dictionary(name)
    if (!filter) return undefined
    let bits =
      version === 4 ? filter.integer('Length', 0) || encrypt.integer('Length', 128) : encrypt.integer('Length', 256)
    if (bits < 0) return undefined
    if (bits < 40) bits *= 8 // a length in bytes
    keyLength = Math.trunc(bits / 8)
    if (['AESV2', 'AESV3'].includes(filter.name('CFM'))) cipher = 'aes'
  } else keyLength = version > 1 ? Math.trunc(encrypt.integer('Length', 40) / 8) : 5
  const isValid = cipher === 'aes' ? [16, 24, 32].includes(keyLength) : keyLength >= 5 && keyLength <= 16
  return isValid ? { cipher, keyLength } : undefined
}

/** A password's bytes padded or cut to 32 (algorithm 2 step a). */
function padded(password: Uint8Array): Uint8Array {
  const out = new Uint8Array(32)
  out.set(password.subarray(0, 32))
  out.set(PADDING.subarray(0, 32 - Math.min(32, password.length)), Math.min(32, password.length))
  return out
}

/** Revisions 2–4: the file key from a user password (algorithm 2), as long as the crypt filter's key. */
function revision4Key(
  encrypt: EncryptDictionary,
  password: Uint8Array,
  keyLength: number,
  ignoreMetadata: boolean,
  fileId: Uint8Array,
): Uint8Array {
  const revision = encrypt.integer('R')
  const parts = [padded(password), encrypt.string('O'), littleEndian(encrypt.integer('P'), 4), fileId]
  if (!ignoreMetadata && revision >= 3 && !encrypt.boolean('EncryptMetadata', true))
    parts.push(Uint8Array.of(0xff, 0xff, 0xff, 0xff))
  let hash = digest('md5', ...parts)
  const used = Math.min(keyLength, 16)
  if (revision >= 3) for (let i = 0; i < 50; i++) hash = digest('md5', hash.subarray(0, used))
  const key = new Uint8Array(keyLength) // PDFium leaves the bytes past 16 zero
  key.set(hash.subarray(0, used))
  return key
}

/**
 * Twenty RC4 passes with the key XORed with 19 … 0 (algorithms 5 and 7, revision 3 and later), or one (revision 2).
 */
function rc4Passes(key: Uint8Array, data: Uint8Array, revision: number): Uint8Array {
  if (revision === 2) return rc4(key, data)
  let out = data
  for (let xor = 19; xor >= 0; xor--) {
    out = rc4(
      key.map((byte) => byte ^ xor),
      out,
    )
  }
  return out
}

/** Revisions 2–4: the file key when `password` is the user password (algorithms 4 and 5), else undefined. */
function revision4UserKey(
  encrypt: EncryptDictionary,
  password: Uint8Array,
  keyLength: number,
  fileId: Uint8Array,
): Uint8Array | undefined {
  const revision = encrypt.integer('R')
  const user = encrypt.string('U')
  if (user.length < 16) return undefined
  // PDFium tries the key with /EncryptMetadata as written, then as if it were true.
  for (const ignoreMetadata of [false, true]) {
    const key = revision4Key(encrypt, password, keyLength, ignoreMetadata, fileId)
    if (revision === 2) {
      if (equalBytes(rc4(key, PADDING), user, 16)) return key
      continue
    }
    const test = new Uint8Array(32)
    test.set(user.subarray(0, 32))
    if (equalBytes(rc4Passes(key, test, revision), digest('md5', PADDING, fileId), 16)) return key
  }
  return undefined
}

/** Revisions 2–4: the user password an owner password unlocks (algorithm 7), its padding taken off. */
function revision4UserPassword(encrypt: EncryptDictionary, ownerPassword: Uint8Array, keyLength: number): Uint8Array {
  const revision = encrypt.integer('R')
  const owner = encrypt.string('O')
  if (owner.length < 32) return EMPTY
  let hash = digest('md5', padded(ownerPassword))
  if (revision >= 3) for (let i = 0; i < 50; i++) hash = digest('md5', hash)
  const key = new Uint8Array(keyLength)
  key.set(hash.subarray(0, Math.min(keyLength, 16)))
  const user = rc4Passes(key, owner.slice(0, 32), revision)
  let length = 32
  while (length > 0 && PADDING[length - 1] === user[length - 1]) length--
  return user.subarray(0, length)
}

/** Revision 6's hardened hash (ISO 32000-2 algorithm 2.B), as PDFium computes it; revision 5's plain SHA-256. */
function revision6Hash(revision: number, password: Uint8Array, salt: Uint8Array, vector: Uint8Array): Uint8Array {
  let hash = digest('sha256', password, salt, vector)
  if (revision < 6) return hash
  for (let round = 1; ; round++) {
    const block = new Uint8Array(password.length + hash.length + vector.length)
    block.set(password)
    block.set(hash, password.length)
    block.set(vector, password.length + hash.length)
    const repeated = new Uint8Array(block.length * 64)
    for (let i = 0; i < 64; i++) repeated.set(block, i * block.length)
    const encrypted = aesCbc('encrypt', hash.subarray(0, 16), hash.subarray(16, 32), repeated)
    // The first 16 bytes as a number modulo 3 (256 ≡ 1 mod 3: the sum of the bytes).
    const choice = encrypted.subarray(0, 16).reduce((sum, byte) => sum + byte, 0) % 3
    hash = digest((['sha256', 'sha384', 'sha512'] as const)[choice]!, encrypted)
    if (round >= 64 && encrypted.at(-1)! <= round - 32) return hash.subarray(0, 32)
  }
}

/** Revisions 5 and 6: the file key when `password` is the owner's or the user's (algorithms 2.A, 11, 12). */
function revision6Key(encrypt: EncryptDictionary, password: Uint8Array, isOwner: boolean): Uint8Array | undefined {
  const revision = encrypt.integer('R')
  const owner = encrypt.string('O')
  const user = encrypt.string('U')
  if (owner.length < 48 || user.length < 48) return undefined
  const entry = isOwner ? owner : user
  const vector = isOwner ? user.subarray(0, 48) : EMPTY
  if (!equalBytes(revision6Hash(revision, password, entry.subarray(32, 40), vector), entry, 32)) return undefined
  const intermediate = revision6Hash(revision, password, entry.subarray(40, 48), vector)
  const wrapped = encrypt.string(isOwner ? 'OE' : 'UE')
  if (wrapped.length < 32) return undefined
  const key = aesCbc('decrypt', intermediate, new Uint8Array(16), wrapped.subarray(0, 32))
  // PDFium checks /Perms too: the permissions and "adb", decrypted with the file key.
  const perms = encrypt.string('Perms')
  if (perms.length === 0) return undefined
  const block = new Uint8Array(16)
  block.set(perms.subarray(0, 16))
  const plain = aesCbc('decrypt', key, new Uint8Array(16), block)
  if (plain[9] !== 0x61 || plain[10] !== 0x64 || plain[11] !== 0x62) return undefined
  if (new DataView(plain.buffer, plain.byteOffset).getUint32(0, true) !== encrypt.integer('P', -1) >>> 0)
    return undefined
  return plain[8] === 0x46 || encrypt.boolean('EncryptMetadata', true) ? key : undefined
}

/**
 * PDFium's other reading of a non-ASCII password: UTF-8 → Latin-1 for revisions 2–4, Latin-1 → UTF-8 for 5 and 6.
 */
function otherEncoding(password: Uint8Array, revision: number): Uint8Array | undefined {
  if (password.every((byte) => byte < 0x80)) return undefined
  if (revision >= 5) return new TextEncoder().encode(String.fromCharCode(...password))
  return Uint8Array.from(new TextDecoder().decode(password), (char) => char.codePointAt(0)! & 0xff)
}

/** The file key PDFium arrives at with this password (CheckSecurity: as the owner's first, then the user's). */
function fileKey(
  encrypt: EncryptDictionary,
  password: Uint8Array,
  keyLength: number,
  fileId: Uint8Array,
): Uint8Array | undefined {
  const revision = encrypt.integer('R')
  const check = (candidate: Uint8Array, isOwner: boolean) => {
    if (revision >= 5) return revision6Key(encrypt, candidate, isOwner)
    return revision4UserKey(
      encrypt,
      isOwner ? revision4UserPassword(encrypt, candidate, keyLength) : candidate,
      keyLength,
      fileId,
    )
  }
  for (const isOwner of password.length > 0 ? [true, false] : [false]) {
    for (const candidate of [password, otherEncoding(password, revision)]) {
      const key = candidate && check(candidate, isOwner)
      if (key) return key.subarray(0, keyLength)
    }
  }
  return undefined
}

/** The per-object key (algorithm 1): MD5 of the file key, object and generation numbers (and "sAlT" for AES). */
function objectKey(key: Uint8Array, cipher: Cipher, object: number, generation: number): Uint8Array {
  const salt = cipher === 'aes' ? Uint8Array.of(0x73, 0x41, 0x6c, 0x54) : EMPTY
  return digest('md5', key, littleEndian(object, 3), littleEndian(generation, 2), salt).subarray(
    0,
    Math.min(key.length + 5, 16),
  )
}

/** RC4 over the stream, in pieces (one scratch buffer: a piece is valid until the next). */
function rc4Decryptor(key: Uint8Array): StreamDecryptor {
  const rc4 = new Rc4(key)
  let scratch = new Uint8Array(0)
  return {
    update(piece) {
      if (scratch.length < piece.length) scratch = new Uint8Array(piece.length)
      return rc4.crypt(piece, scratch.subarray(0, piece.length))
    },
    final: () => EMPTY,
  }
}

/**
 * AES-CBC over the stream, in pieces: its first 16 bytes are the IV. As PDFium: the last whole block is held back
 * and loses its padding at the end (all of it when the pad byte is 16 or more); a partial last block is dropped.
 */
function aesDecryptor(key: Uint8Array): StreamDecryptor {
  const iv = new Uint8Array(16)
  let ivBytes = 0
  let inputBytes = 0
  let decipher: ReturnType<typeof createDecipheriv> | undefined
  let held = EMPTY // the last whole block decrypted so far
  return {
    update(piece) {
      if (ivBytes < 16) {
        const taken = Math.min(16 - ivBytes, piece.length)
        iv.set(piece.subarray(0, taken), ivBytes)
        ivBytes += taken
        piece = piece.subarray(taken)
        if (ivBytes < 16) return EMPTY
        decipher = createDecipheriv(`aes-${key.length * 8}-cbc`, key, iv)
        decipher.setAutoPadding(false)
      }
      inputBytes += piece.length
      const plain = decipher!.update(piece)
      if (plain.length === 0) return EMPTY
      const blocks = new Uint8Array(held.length + plain.length)
      blocks.set(held)
      blocks.set(plain, held.length)
      held = blocks.slice(blocks.length - 16)
      return blocks.subarray(0, blocks.length - 16)
    },
    final() {
      if (held.length < 16) return EMPTY
      if (inputBytes % 16 !== 0) return held // a partial block after it: no padding taken off
      const pad = held[15]!
      return pad < 16 ? held.subarray(0, 16 - pad) : EMPTY
    },
  }
}

function decryption(cipher: Cipher, key: Uint8Array): PdfDecryption {
  return {
    forStream(object, generation) {
      // AES-256 uses the file key itself; every other cipher a key of its own for each object.
      if (cipher === 'aes' && key.length === 32) return aesDecryptor(key)
      const own = objectKey(key, cipher, object, generation)
      return cipher === 'aes' ? aesDecryptor(own) : rc4Decryptor(own)
    },
  }
}

/** `/Encrypt` and `/ID` values read at most (each within MAX_VALUE_BYTES): past them, no more are looked for. */
const MAX_READS = 1024
const MAX_VALUE_BYTES = 4096

/** Positions just after each whole-word `/name` in the file that `first` (the value's first byte) may follow. */
function* afterName(bytes: Uint8Array, name: string, first?: number): Generator<number> {
  const word = `/${name}`
  let reads = 0
  for (let at = bytes.indexOf(0x2f); at >= 0 && reads < MAX_READS; at = bytes.indexOf(0x2f, at + 1)) {
    if (!spells(bytes, at, word) || isRegular(bytes[at + word.length])) continue
    let value = at + word.length
    while (isWhite(bytes[value])) value++
    if (first !== undefined && bytes[value] !== first) continue
    reads++
    yield value
  }
}

/** Reads the value at `at` (a reference resolved), or undefined when none can be read there (a name in a string). */
function valueAt(bytes: Uint8Array, at: number, index: ObjectIndex): PdfValue | undefined {
  let value: PdfValue
  try {
    value = new ObjectReader(bytes, at, Math.min(bytes.length, at + MAX_VALUE_BYTES), true).value()
  } catch (error) {
    if (error instanceof PdfStreamSyntaxError) return undefined
    throw error
  }
  // A reference to an object the file's bytes do not hold is refused (PdfStreamSyntaxError), not ignored.
  return index.resolve(value)
}

/** A value's identity for counting distinct candidates. */
const keyOf = (value: PdfValue | undefined): string =>
  value instanceof Map
    ? [...value].map(([k, v]) => `${k}=${keyOf(v)}`).join(',')
    : value && typeof value === 'object' && 'bytes' in value
      ? Buffer.from(value.bytes).toString('hex')
      : JSON.stringify(value ?? null)

/**
 * The keys PDFium may decrypt the document's streams with, given the password it is handed (none: the empty user
 * password): empty for a document that is not encrypted or is encrypted with /Identity. Throws PdfPasswordError
 * when the document is encrypted and no encryption dictionary opens with the password, PdfSecurityHandlerError when
 * none is the standard handler's, PdfStreamSyntaxError when the file names too many to try. Pauses (yields) after
 * each key tried: revision 6's hash of a long password is tens of milliseconds.
 */
export function* findPdfDecryptions(bytes: Uint8Array, password: string | undefined): Generator<void, PdfDecryption[]> {
  const index = new ObjectIndex(bytes, { keepStrings: true, maxObjectBytes: MAX_VALUE_BYTES })
  const dictionaries = new Map<string, Map<string, PdfValue>>()
  for (const at of afterName(bytes, 'Encrypt')) {
    const value = valueAt(bytes, at, index)
    if (value instanceof Map) dictionaries.set(keyOf(value), value)
  }
  if (dictionaries.size === 0) return []
  const fileIds = new Map<string, Uint8Array>([['', EMPTY]])
  for (const at of afterName(bytes, 'ID', 0x5b)) {
    const value = valueAt(bytes, at, index)
    const first = Array.isArray(value) ? value[0] : undefined
    if (first && typeof first === 'object' && 'bytes' in first) fileIds.set(keyOf(first), first.bytes)
  }
  if (dictionaries.size > MAX_CANDIDATES || fileIds.size > MAX_CANDIDATES + 1) {
    throw new PdfStreamSyntaxError(
      `the file names ${dictionaries.size} encryption dictionaries and ${fileIds.size - 1} file IDs; at most ${MAX_CANDIDATES} of each are tried`,
    )
  }
  const passwordBytes = new TextEncoder().encode(password ?? '') // what PDFium is handed: the UTF-8 bytes
  const decryptions = new Map<string, PdfDecryption>()
  let opens = false
  const handlers = new Set<string>()
  for (const entries of dictionaries.values()) {
    const encrypt = new EncryptDictionary(entries, index)
    const handler = encrypt.name('Filter')
    if (handler !== 'Standard') {
      handlers.add(handler || 'no /Filter')
      continue
    }
    const info = cryptInfo(encrypt)
    if (!info) continue
    if (info.cipher === 'none') {
      opens = true
      continue
    }
    // Revisions 5 and 6 do not use the file ID.
    for (const fileId of encrypt.integer('R') >= 5 ? [EMPTY] : fileIds.values()) {
      const key = fileKey(encrypt, passwordBytes, info.keyLength, fileId)
      yield
      if (!key) continue
      opens = true
      decryptions.set(`${info.cipher} ${Buffer.from(key).toString('hex')}`, decryption(info.cipher, key))
    }
  }
  if (!opens && handlers.size > 0 && handlers.size === dictionaries.size) {
    throw new PdfSecurityHandlerError(
      `the PDF is encrypted by the ${[...handlers].map((name) => `/${name}`).join(', ')} security handler; only the standard (password) handler is read`,
    )
  }
  if (!opens) throw new PdfPasswordError('password required or incorrect password')
  return [...decryptions.values()]
}
