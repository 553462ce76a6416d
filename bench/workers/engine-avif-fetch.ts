// `npm run check:deploy` measures the AVIF Worker's startup up to its first answer: its entrypoint (bundled
// the same way, so the bundle is its code) plus a fetch handler, which the AVIF Worker itself does not need.
import Engine from '../../worker/engine-workers/avif'

export default class extends Engine {
  override async fetch() {
    return new Response('ok')
  }
}
