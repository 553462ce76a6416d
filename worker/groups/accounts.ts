// The route group of accounts: /auth/… and the Layout B aliases (/register, /login, /user/…), as app.ts mounts them.
import { answerUnmatched, appShell } from '../app-shell'
import { apiKeyRoutes } from '../auth/api-key-routes'
import { oidcRoutes } from '../auth/oidc-routes'
import { passkeyRoutes } from '../auth/passkey-routes'
import { accountRoutes } from '../auth/routes'
import { totpRoutes } from '../auth/totp-routes'
import { defaultResourceRoutes } from '../rules/default-routes'

export function accountsApp() {
  const app = appShell()
  app
    .route('/', accountRoutes(undefined, defaultResourceRoutes))
    .route('/', apiKeyRoutes())
    .route('/', totpRoutes())
    .route('/', oidcRoutes())
    .route('/', passkeyRoutes())
  answerUnmatched(app)
  return app
}
