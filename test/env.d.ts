import type { D1Migration } from 'cloudflare:test'

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[]
      MAIL_CATCHER_URL: string
      WHISPER_URL: string
      WEBHOOK_RECEIVER_URL: string
      AUTH_OAUTH_PROVIDERS?: string
      OIDC_PROVIDER_URL: string
      OAUTH_STAND_IN_URL: string
      /** The consumer's GotenbergContainer class (vitest.config.ts), which has no container here. */
      SIDECAR_CONTAINER: DurableObjectNamespace
    }
  }
}
