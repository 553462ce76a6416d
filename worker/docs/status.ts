// GET /'s answer: the service's name, version and status. Apart from its OpenAPI route (docs/routes.ts), so that the
// status group (groups/status.ts) answers it without zod.
import packageJson from '../../package.json'

export const serviceStatusBody = () => ({ name: packageJson.name, version: packageJson.version, status: 'ok' as const })
