// Password hashing: argon2id (WASM, m=19 MiB, t=2, p=1 — OWASP's minimum) stored as PHC strings, so parameters
// can rise later and old hashes are rehashed on login. bcrypt hashes ($2a$/$2b$, as Basefloor stores them) are
// accepted for imported users and rehashed to argon2id on their first login.
import Argon2, { Argon2Type, Argon2Version } from '@phi-ag/argon2'
import argon2Wasm from '@phi-ag/argon2/argon2.wasm'
import bcrypt from 'bcryptjs'

export const ARGON2_PARAMS = { memoryCost: 19 * 1024, timeCost: 2, parallelism: 1, hashLength: 32 } as const

// One instance per isolate: instantiating costs more than a hash, and its 19 MiB of memory is reused.
let argon2: Argon2 | undefined

async function engine(): Promise<Argon2> {
  argon2 ??= new Argon2(await WebAssembly.instantiate(argon2Wasm))
  return argon2
}

export async function hashPassword(password: string): Promise<string> {
  const { encoded } = (await engine()).hash(password, {
    ...ARGON2_PARAMS,
    type: Argon2Type.Argon2id,
    version: Argon2Version.Version13,
    salt: crypto.getRandomValues(new Uint8Array(16)),
  })
  return encoded
}

export interface PasswordCheck {
  matches: boolean
  /** True when the stored hash is bcrypt or weaker argon2 parameters: store a fresh hash. */
  needsRehash: boolean
}

export async function verifyPassword(stored: string, password: string): Promise<PasswordCheck> {
  if (/^\$2[aby]\$\d\d\$/.test(stored)) {
    return { matches: await bcrypt.compare(password, stored), needsRehash: true }
  }
  if (!stored.startsWith('$argon2')) return { matches: false, needsRehash: false }
  const result = (await engine()).tryVerify(stored, password)
  return { matches: result.success, needsRehash: result.success && isWeakerThanCurrent(stored) }
}

/** Spends the same work as a real check, so an unknown email takes as long as a wrong password. */
export async function spendDummyCheck(password: string): Promise<void> {
  dummyHash ??= await hashPassword('edgefloor-timing-equaliser')
  await verifyPassword(dummyHash, password)
}
let dummyHash: string | undefined

function isWeakerThanCurrent(phc: string): boolean {
  const match = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(phc)
  if (!match) return true
  const [memory, time, lanes] = match.slice(1).map(Number) as [number, number, number]
  return memory < ARGON2_PARAMS.memoryCost || time < ARGON2_PARAMS.timeCost || lanes < ARGON2_PARAMS.parallelism
}
