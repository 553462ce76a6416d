// `npm run check:deploy` measures the text engine Worker's startup up to its first answer: its entrypoint (bundled
// the same way, so the bundle is its code) plus a fetch handler, which the engine Worker itself does not need.
import Engine from '../../worker/engine-workers/text'

export default class extends Engine {
  override async fetch() {
    return new Response('ok')
  }
}
