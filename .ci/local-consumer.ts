// The consumer Worker's config as `wrangler dev` runs it beside the API Worker (`-c wrangler.toml -c <this>`):
// wrangler.consumer.toml less its Workers AI binding, in a folder of its own with the run's settings as .dev.vars.
// Its [dev] section disables containers: the sidecar's Durable Object forwards to GOTENBERG_URL (no Docker needed).
// Wrangler 4.156 gives `--local` and `--env-file` to the first config only. So a second config's AI binding (no local
// simulator) would start a remote proxy session, which fails without a Cloudflare account and stops `wrangler dev`.
// And the second Worker reads its secrets from the .dev.vars beside its config, never from `--env-file`.
// Locally the API Worker's AI binding is not simulated either, so TRANSCRIBE_PROVIDER=auto uses TRANSCRIBE_URL.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/**
 * Writes `dir`/wrangler.consumer.toml and `dir`/.dev.vars (`settings`: secrets and overrides); answers the config's
 * path.
 */
export function writeLocalConsumerConfig(dir: string, settings: Record<string, string>): string {
  const toml = readFileSync(join(root, 'wrangler.consumer.toml'), 'utf8')
  const local = toml
    .replace(/^\[ai\]\nbinding = "AI"\n/m, '')
    // Paths in a config are relative to its folder: the entry is named from the repository.
    .replace(/^main = "(.*)"$/m, (_line, main: string) => `main = ${JSON.stringify(join(root, main))}`)
    // So is an [alias] target (wrangler resolves it from the config's folder).
    .replace(
      /^("[^"\n]+") = "(\.\/[^"]+)"$/gm,
      (_line, from: string, to: string) => `${from} = ${JSON.stringify(join(root, to))}`,
    )
    // The sidecar's image, a Dockerfile and its build context ([[containers]]): not built while [dev] disables
    // containers, but wrangler resolves the paths all the same.
    .replace(
      /^(image|image_build_context) = "(\..*)"$/gm,
      (_line, key: string, path: string) => `${key} = ${JSON.stringify(join(root, path))}`,
    )
  if (/^\[ai\]/m.test(local) || !local.includes(`main = ${JSON.stringify(join(root, 'worker/consumer.ts'))}`)) {
    throw new Error(
      'wrangler.consumer.toml changed shape: .ci/local-consumer.ts no longer finds its [ai] binding or main',
    )
  }
  mkdirSync(dir, { recursive: true })
  const path = join(dir, 'wrangler.consumer.toml')
  writeFileSync(path, local)
  const devVars = Object.entries(settings).map(([name, value]) => `${name}=${JSON.stringify(value)}`)
  writeFileSync(join(dir, '.dev.vars'), `${devVars.join('\n')}\n`, { mode: 0o600 })
  return path
}

/** The configs of the Workers behind service bindings, run as they are (they have no binding and no setting): the
 * passkey Worker beside the API Worker, the engine Workers beside the consumer, the AVIF Worker beside them. */
export const SERVICE_CONFIGS = [
  'wrangler.passkeys.toml',
  'wrangler.engine-pdf.toml',
  'wrangler.engine-image.toml',
  'wrangler.engine-text.toml',
  'wrangler.engine-avif.toml',
]

/** `wrangler dev` arguments for the Workers behind service bindings: one `-c` each. */
export const serviceConfigArgs = () => SERVICE_CONFIGS.flatMap((config) => ['-c', join(root, config)])
