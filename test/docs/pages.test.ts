// The pages the Worker serves from public/: the API reference, the console and their static files, each with a
// same-origin content security policy.
import { describe, expect, it } from 'vitest'
import { call, callJson } from '../support/api'

describe('GET /docs', () => {
  it('serves the reference page, which loads only its own scripts and styles (Swagger UI among them, no CDN)', async () => {
    const response = await call('GET', '/docs')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/html')
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(response.headers.get('content-security-policy')).toContain("connect-src 'self'")
    const html = await response.text()
    expect(html).toContain('<script type="module" src="/static/reference.js"></script>')
    expect(html).toContain('<script src="/static/swagger-ui.js"></script>')
    expect(html).toContain('href="/static/swagger-ui.css"')
    expect(html).toContain('href="/static/reference.css"')
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//)
  })
})

describe('GET /console', () => {
  it('serves the console page, which loads only its own script and styles', async () => {
    const response = await call('GET', '/console')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/html')
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    const html = await response.text()
    expect(html).toContain('<script type="module" src="/static/console.js"></script>')
    // Uploads go through Uppy's Dashboard (bundled into /static/uppy.js and uppy.css at build time), mounted here.
    expect(html).toContain('<link rel="stylesheet" href="/static/uppy.css">')
    expect(html).toContain('id="uploader"')
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//)
  })

  it('keeps the access token in sessionStorage; localStorage holds only tus upload URLs, which it only removes', async () => {
    const modules = [
      'console.js',
      'console-api.js',
      'console-files.js',
      'console-sign-in.js',
      'console-account.js',
      'console-admin.js',
    ]
    const scripts = await Promise.all(modules.map(async (name) => (await call('GET', `/static/${name}`)).text()))
    const [entry, session] = scripts
    // Every module the entry imports, directly or through another, is in this list.
    const imported = new Set(
      scripts.flatMap((script) => [...script.matchAll(/from '\.\/([a-z-]+\.js)'/g)].map((match) => match[1])),
    )
    expect([...imported].filter((name) => name !== 'uppy.js' && !modules.includes(name!))).toEqual([])
    expect(entry).toContain("from './console-api.js'")
    expect(session).toContain('sessionStorage.setItem(TOKEN_KEY, session.token)')
    // tus-js-client (inside Uppy) writes its "tus::" upload URLs there to resume after a reload; the console itself
    // only removes them (on success and on sign-out) and never writes anything else.
    expect(scripts.flatMap((script) => script.match(/localStorage\.\w+/g) ?? [])).toEqual(['localStorage.removeItem'])
  })
})

describe('GET /static/:file', () => {
  it.each([
    ['reference.js', 'javascript', "url: '/openapi.json'"],
    ['reference.css', 'text/css', '.bar'],
    ['pages.css', 'text/css', '.file'],
    ['console.js', 'javascript', "from './console-files.js'"],
    ['console-files.js', 'javascript', "from './uppy.js'"],
  ])('serves %s as %s', async (file, type, excerpt) => {
    const response = await call('GET', `/static/${file}`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain(type)
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await response.text()).toContain(excerpt)
  })

  it('serves the icon as SVG and as PNG, each with its image type', async () => {
    const svg = await call('GET', '/static/icon.svg')
    expect(svg.status).toBe(200)
    expect(svg.headers.get('content-type')).toContain('image/svg+xml')
    expect(await svg.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
    const png = await call('GET', '/static/icon.png')
    expect(png.status).toBe(200)
    expect(png.headers.get('content-type')).toBe('image/png')
    const bytes = new Uint8Array(await png.arrayBuffer())
    expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
    for (const page of ['/docs', '/console']) {
      const html = await (await call('GET', page)).text()
      expect(html).toContain('<link rel="icon" href="/static/icon.svg" type="image/svg+xml">')
    }
  })

  it('answers 404 for a file that does not exist', async () => {
    const { status, body } = await callJson('GET', '/static/missing.js')
    expect(status).toBe(404)
    expect(body).toEqual({ message: 'not found', code: 'NOT_FOUND' })
  })

  it.each(['..%2Fwrangler.toml', '.env', 'docs.html', 'a%2Fb.js'])('refuses %s as a file name', async (file) => {
    const { status, body } = await callJson('GET', `/static/${file}`)
    expect([400, 404]).toContain(status)
    expect(body).toMatchObject({ message: expect.any(String) })
  })
})
