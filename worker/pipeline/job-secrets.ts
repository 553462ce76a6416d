// Secrets among a job's options: those its converters declare secret (SECRET_OPTIONS), such as a document's
// `password`. Sealed with AES-GCM before they reach D1, under a key derived (HKDF) from JWT_SECRET for this one
// purpose and bound to the job's owner. Opened only for the converter; never shown in a job view, event or webhook;
// wiped from the row when the job ends (done or failed).
import type { Config } from '../config'
import type { OptionValues } from '../converters/converter'
import { SECRET_OPTIONS } from '../converters/registry'
import { openSealed, sealBytes } from '../sealing'

export type JobOptions = OptionValues

const SEALED = 'sealed:v1:'
const PURPOSE = 'job option secrets'

/** The options as stored: every secret sealed (the owner's id is the additional data, so a row copied to another
 * user's job does not open). */
export async function sealOptions(config: Config, ownerId: string, options: JobOptions = {}): Promise<JobOptions> {
  const sealed: JobOptions = { ...options }
  for (const name of SECRET_OPTIONS) {
    const value = options[name]
    if (typeof value !== 'string') continue
    sealed[name] = `${SEALED}${await sealBytes(config, PURPOSE, ownerId, new TextEncoder().encode(value))}`
  }
  return sealed
}

/** The options for the converter, secrets opened; a secret that does not open (or was wiped) is left out. */
export async function openOptions(config: Config, ownerId: string, options: JobOptions): Promise<JobOptions> {
  const opened: JobOptions = { ...options }
  for (const name of SECRET_OPTIONS) {
    const value = options[name]
    if (typeof value !== 'string' || !value.startsWith(SEALED)) continue
    delete opened[name]
    try {
      const plain = await openSealed(config, PURPOSE, ownerId, value.slice(SEALED.length))
      opened[name] = new TextDecoder().decode(plain)
    } catch {}
  }
  return opened
}

/** The options as a client may see them: no secret, sealed or not. */
export function publicOptions(options: JobOptions): JobOptions {
  const shown: JobOptions = { ...options }
  for (const name of SECRET_OPTIONS) delete shown[name]
  return shown
}
