// `npm run check:deploy` measures the passkey Worker's startup up to its first answer: its entrypoint (bundled the
// same way, so the bundle is its code) plus a fetch handler, which the passkey Worker itself does not need.
import PasskeyWorker from '../../worker/auth/passkey-worker'

export default class extends PasskeyWorker {
  override async fetch() {
    return new Response('ok')
  }
}
