// Where `npm start` serves: PORT (the API Worker, 8787 by default) and SIDECAR_PORT (the sidecar, 3000), and the
// settings that name them (APP_URL for the links in emails, GOTENBERG_URL for the Workers' Office conversions),
// moved with them unless the environment gives those settings itself.

export const DEFAULT_API_PORT = 8787
export const DEFAULT_SIDECAR_PORT = 3000

export interface LocalPorts {
  apiPort: number
  sidecarPort: number
  /** Settings to add to the run's overrides. */
  settings: Record<string, string>
}

/** The ports and settings for `env`; throws an Error naming the variable when a port is not a TCP port. */
export function localPorts(env: Record<string, string | undefined>): LocalPorts {
  const apiPort = portFrom(env, 'PORT', DEFAULT_API_PORT)
  const sidecarPort = portFrom(env, 'SIDECAR_PORT', DEFAULT_SIDECAR_PORT)
  const settings: Record<string, string> = {}
  if (apiPort !== DEFAULT_API_PORT && !env.APP_URL) settings.APP_URL = `http://127.0.0.1:${apiPort}`
  if (sidecarPort !== DEFAULT_SIDECAR_PORT && !env.GOTENBERG_URL)
    settings.GOTENBERG_URL = `http://127.0.0.1:${sidecarPort}`
  return { apiPort, sidecarPort, settings }
}

function portFrom(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const text = env[name]?.trim()
  if (!text) return fallback
  const port = Number(text)
  if (!/^\d+$/.test(text) || port < 1 || port > 65535)
    throw new Error(`invalid ${name}: "${text}" is not a TCP port (1 to 65535)`)
  return port
}
