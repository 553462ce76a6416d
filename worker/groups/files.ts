// The route group of files, uploads, previews and jobs: /files/…, /convert/…, /jobs/…, as app.ts mounts them.
import { answerUnmatched, appShell } from '../app-shell'
import { fileRoutes } from '../files/routes'
import { tusRoutes } from '../files/tus-routes'
import { pipelineRoutes } from '../pipeline/routes'
import { autoConvert } from '../pipeline/start'
import { previewRoutes } from '../previews/routes'

export function filesApp() {
  const app = appShell()
  app
    .route('/', tusRoutes(autoConvert))
    .route('/', fileRoutes(autoConvert))
    .route('/', previewRoutes())
    .route('/', pipelineRoutes())
  answerUnmatched(app)
  return app
}
