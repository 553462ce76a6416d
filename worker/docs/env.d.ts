// The static assets binding (wrangler.toml [assets]) that serves public/ for /docs and /console.
interface Env {
  ASSETS: Fetcher
}
declare namespace Cloudflare {
  interface Env {
    ASSETS: Fetcher
  }
}
