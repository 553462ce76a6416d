// TLS for the test servers on loopback: a certificate authority and a server certificate for 127.0.0.1 and
// localhost, made once with openssl under .tmp/loopback-tls/, and the authority trusted by every workerd the run
// starts. workerd reads its system trust store from the file SSL_CERT_FILE names (as OpenSSL does), when it starts:
// this module points that variable at the system's bundle plus the authority, before the vitest pool or a
// `wrangler dev` spawns workerd. (Miniflare's own NODE_EXTRA_CA_CERTS is read when miniflare loads, which is before
// any line of vitest.config.ts runs.) A Worker on Cloudflare trusts a public certificate the same way.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const dir = fileURLToPath(new URL('../../.tmp/loopback-tls/', import.meta.url))

function openssl(cwd: string, args: string[]): void {
  const run = spawnSync('openssl', args, { cwd, encoding: 'utf8' })
  if (run.status !== 0)
    throw new Error(
      `openssl ${args[0]} failed (the loopback HTTPS tests need openssl): ${run.error?.message ?? run.stderr}`,
    )
}

/** The authority and a server certificate it signed (an authority's own certificate cannot serve: rustls refuses it). */
function makeCertificates(): void {
  mkdirSync(join(dir, '..'), { recursive: true })
  const scratch = mkdtempSync(join(dir, '..', 'loopback-tls-'))
  try {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
    openssl(scratch, [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '3650',
      '-subj',
      '/CN=Edgefloor test loopback CA',
    ])
    openssl(scratch, ['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'])
    writeFileSync(
      join(scratch, 'server.ext'),
      'basicConstraints=critical,CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n',
    )
    openssl(scratch, [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '3650',
      '-extfile',
      'server.ext',
    ])
    // At once, whole: another run starting now uses either its own folder or this one.
    renameSync(scratch, dir)
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true })
    if (!existsSync(join(dir, 'server.pem'))) throw error
  }
}

if (!existsSync(join(dir, 'server.pem'))) makeCertificates()

/** The key and certificate chain a loopback HTTPS server presents (node:https createServer's `key` and `cert`). */
export const loopbackTls = {
  key: readFileSync(join(dir, 'server.key'), 'utf8'),
  cert: readFileSync(join(dir, 'server.pem'), 'utf8'),
}

/** Where OpenSSL and workerd look for the system's bundle when SSL_CERT_FILE is not set (Debian's first). */
const SYSTEM_BUNDLES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt', '/etc/ssl/cert.pem']

const authority = readFileSync(join(dir, 'ca.pem'), 'utf8')
const trusted = join(dir, 'trusted.pem')
if (process.env.SSL_CERT_FILE !== trusted) {
  const system = [process.env.SSL_CERT_FILE, ...SYSTEM_BUNDLES].find((file) => file && existsSync(file))
  const kept = system ? `${readFileSync(system, 'utf8').trimEnd()}\n` : ''
  const file = `${trusted}.${process.pid}`
  writeFileSync(file, kept + authority)
  renameSync(file, trusted)
  process.env.SSL_CERT_FILE = trusted
}
