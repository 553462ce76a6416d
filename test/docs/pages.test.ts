// The pages the Worker serves from public/: the API reference, the console and their static files, each with a
// same-origin content security policy.
import { describe, expect, it } from 'vitest'
import { call, callJson } from '../support/api'

describe('GET /docs', () => {
  it('serves the reference page, which loads only its own script and styles', async () => {
    const response = await call('GET', '/docs')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/html')
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(response.headers.get('content-security-policy')).toContain("connect-src 'self'")
    const html = await response.text()
    expect(html).toContain('<script type="module" src="/static/reference.js"></script>')
    expect(html).toContain('href="/static/pages.css"')
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
    expect(html).toContain('id="upload-progress"')
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//)
  })

  it('keeps the access token in sessionStorage and never writes localStorage', async () => {
    const script = await (await call('GET', '/static/console.js')).text()
    expect(script).toContain('sessionStorage.setItem(TOKEN_KEY, body.token)')
    expect(script).not.toContain('localStorage')
  })
})

describe('GET /static/:file', () => {
  it.each([
    ['reference.js', 'javascript', 'fetch(\'/openapi.json\')'],
    ['pages.css', 'text/css', '.operation'],
    ['console.js', 'javascript', 'XMLHttpRequest'],
  ])('serves %s as %s', async (file, type, excerpt) => {
    const response = await call('GET', `/static/${file}`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain(type)
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await response.text()).toContain(excerpt)
  })

  it('answers 404 for a file that does not exist', async () => {
    const { status, body } = await callJson('GET', '/static/missing.js')
    expect(status).toBe(404)
    expect(body).toEqual({ message: 'not found', code: 'not_found' })
  })

  it.each(['..%2Fwrangler.toml', '.env', 'docs.html', 'a%2Fb.js'])('refuses %s as a file name', async (file) => {
    const { status, body } = await callJson('GET', `/static/${file}`)
    expect([400, 404]).toContain(status)
    expect(body).toMatchObject({ message: expect.any(String) })
  })
})
