// Four projects, each starting only what its files need (a project's global setups run only when one of its
// files is selected, so `npx vitest run test/rules/parse.test.ts` starts no server at all):
// - `unit` (run first): workerd with its local D1 and R2, no global setup: parsers, layout, encoders, rules.
// - `worker`: workerd with real D1, R2 and Queues (the Worker under test is test/setup/worker-entry.ts: the API
//   Worker configured by wrangler.toml plus the consumer Worker's handlers and queue consumers) and the loopback stand-ins: mail catcher, whisper.cpp, Gotenberg recorder, webhook receiver.
// - `worker-office`: the Worker against the real sidecar (LibreOffice) and the Office documents it converts.
// - `node`: the sidecar's suites on Node 22.
// - `e2e`: the real Worker under `wrangler dev` (one for every file), the sidecar, Chromium and real clients.
// Integration projects wait for queues and LibreOffice on a machine that may be busy: their deadlines are sized
// for that (never vitest's 5 s default), and every poll fails loudly at its deadline (test/support/until.ts).
// Sets SSL_CERT_FILE before any workerd starts, so workerd trusts the tests' loopback HTTPS servers.
import './test/setup/loopback-tls.ts'
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-plugin'
import { fileURLToPath } from 'node:url'
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config'
import { unstable_readConfig } from 'wrangler'
import { testProviders } from './test/setup/oauth-providers.ts'

const root = fileURLToPath(new URL('.', import.meta.url))

/** Files that need nothing but workerd itself. A file not listed here or below runs in `worker`, which has everything. */
const UNIT = [
  'test/rules/parse.test.ts',
  'test/rules/evaluate.test.ts',
  'test/rules/compile.test.ts',
  'test/rules/values.test.ts',
  'test/rules/agree.test.ts',
  'test/engines/text-layout.test.ts',
  'test/engines/text-render.test.ts',
  'test/engines/png-encode.test.ts',
  'test/engines/png-filter.test.ts',
  'test/engines/jpeg-end.test.ts',
  'test/engines/pdf-streams.test.ts',
  'test/engines/pdf-content.test.ts',
  'test/engines/image-fast-decoders.test.ts',
  'test/converters/registry.test.ts',
  'test/converters/pdf-golden.test.ts',
  'test/hostile/draw-cost-fixtures.test.ts',
  'test/converters/text-fallback-fonts.test.ts',
  'test/docs/error-table.test.ts',
  'test/imports.test.ts',
  'test/folder-order.test.ts',
  'test/error-details.test.ts',
  'test/files/multipart.test.ts',
  'test/queue.test.ts',
  'test/previews/avif-worker.test.ts',
]
/** Files that convert through the real sidecar (LibreOffice) or read the Office documents. */
const OFFICE = [
  'test/converters/office-to-pdf.test.ts',
  'test/converters/office-template-invoice.test.ts',
  'test/converters/office-recovery.test.ts',
  'test/previews/preview.test.ts',
  'test/previews/office-once.test.ts',
  'test/converters/pdf-to-text.test.ts',
]
const NODE = [
  'test/sidecar/**/*.test.ts',
  'test/bench/**/*.test.ts',
  'test/config/**/*.test.ts',
  'test/docs/guides.test.ts',
  'test/db/schema.test.ts',
]
/** End-to-end files: the real Worker under `wrangler dev`, one for all of them (test/setup/dev-worker.ts). */
const E2E = ['test/e2e/**/*.test.ts']

/**
 * The integration projects run two files at a time (vitest's default here is cores − 1 = 1): most of their time is
 * spent waiting on workerd, the queue, LibreOffice or wrangler, and a second file fills those waits. Projects of one
 * `sequence.groupOrder` must share it.
 */
const TWO_AT_ONCE = { maxWorkers: 2 }

/** Deadlines sized for a loaded 2-core machine (never vitest's 5 s default): a test fails by its assertions, not its speed. */
const LOADED = { testTimeout: 120_000, hookTimeout: 180_000 }

/**
 * Every project: a test that asserts nothing fails (an early return or a loop over nothing cannot pass silently), and
 * `expect.poll` waits as long as a loaded machine needs (its own default is 1 s, which a busy CI machine misses).
 */
const ASSERTING = { expect: { requireAssertions: true, poll: { timeout: 60_000, interval: 100 } } }

type Inject = (key: string) => string | undefined

/**
 * The consumer Worker's queue consumers (wrangler.consumer.toml) in Miniflare's shape. The pool runs one Worker:
 * wrangler.toml's bindings with test/setup/worker-entry.ts, which has the consumer Worker's handlers too, as its entry.
 */
interface QueueConsumer {
  queue: string
  max_batch_size?: number
  max_batch_timeout?: number
  max_retries?: number
  retry_delay?: number
  dead_letter_queue?: string
}

function consumerWorkerQueues() {
  const { queues } = unstable_readConfig({ config: `${root}wrangler.consumer.toml` })
  return Object.fromEntries(
    (queues.consumers ?? []).map((consumer: QueueConsumer) => [
      consumer.queue,
      {
        maxBatchSize: consumer.max_batch_size,
        maxBatchTimeout: consumer.max_batch_timeout,
        maxRetries: consumer.max_retries,
        retryDelay: consumer.retry_delay,
        deadLetterQueue: consumer.dead_letter_queue,
      },
    ]),
  )
}

/** A workerd project; `bindings` adds the URLs its global setups provided. */
function workerdProject(
  name: string,
  test: TestProjectInlineConfiguration['test'],
  bindings: (inject: Inject) => Record<string, string> = () => ({}),
): TestProjectInlineConfiguration {
  return {
    plugins: [
      cloudflareTest(async ({ inject }) => ({
        wrangler: { configPath: `${root}wrangler.toml` },
        main: `${root}test/setup/worker-entry.ts`,
        remoteBindings: false,
        miniflare: {
          queueConsumers: consumerWorkerQueues(),
          // The consumer Worker's Container class, bound under a name of its own: the pipeline here converts through
          // GOTENBERG_URL, and a test converts through the class (with no container, as wrangler dev runs it).
          durableObjects: { SIDECAR_CONTAINER: { className: 'GotenbergContainer', useSQLite: true } },
          // The passkey Worker (wrangler.passkeys.toml) is the entrypoint test/setup/worker-entry.ts exports: the pool runs
          // one Worker, and the API Worker's calls still cross a service binding through Workers RPC.
          // The AVIF Worker (wrangler.engine-avif.toml) likewise: the queue consumer's previews encode AVIF through RPC.
          serviceBindings: {
            PASSKEYS: { name: 'edgefloor', entrypoint: 'PasskeyWorker' },
            AVIF_ENGINE: { name: 'edgefloor', entrypoint: 'AvifWorker' },
          },
          bindings: {
            JWT_SECRET: 'test-secret-at-least-32-characters-long!!',
            // A quota so large no test reaches it by uploading, finite so a test can bring one user near it (a
            // record standing for what they store) and watch the queue consumer refuse an output.
            FILES_QUOTA_BYTES: String(2 ** 40),
            TEST_MIGRATIONS: await readD1Migrations(`${root}migrations`),
            ...bindings(inject as Inject),
          },
        },
      })),
    ],
    test: { name, ...ASSERTING, ...test },
  }
}

/** Values that the stand-ins' global setups `provide` (their loopback URLs), as the Worker's bindings. */
function standInBindings(inject: Inject): Record<string, string> {
  const mailCatcher = inject('mailCatcherUrl')!
  const whisper = inject('whisperUrl')!
  return {
    EMAIL_PROVIDER: 'mailchannels',
    MAILCHANNELS_API_URL: `${mailCatcher}/tx/v1/send`,
    MAILCHANNELS_API_KEY: 'test-mailchannels-key',
    MAIL_CATCHER_URL: mailCatcher,
    // Workers AI has no local mode: TRANSCRIBE_PROVIDER=auto (the default) falls back from the local AI binding to
    // TRANSCRIBE_URL, a loopback whisper.cpp stand-in.
    TRANSCRIBE_URL: whisper,
    TRANSCRIBE_API_KEY: 'test-transcribe-key',
    WHISPER_URL: whisper,
    WEBHOOK_RECEIVER_URL: inject('webhookReceiverUrl')!,
    // The webhook receiver listens on loopback, which callback URLs may not name outside tests.
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,localhost',
    // Callback URL names resolve through the receiver's DNS-over-HTTPS stand-in (offline: no 1.1.1.1 here).
    WEBHOOK_DNS_URL: `${inject('webhookReceiverUrl')!}/dns-query`,
  }
}

const STAND_INS = ['test/setup/mail-catcher.ts', 'test/setup/whisper-server.ts', 'test/setup/webhook-receiver.ts']

export default defineConfig({
  test: {
    projects: [
      // One workerd for every unit file (isolate: false): they share no state, and a fresh runtime per file cost
      // ~5 s each.
      workerdProject('unit', {
        include: UNIT,
        setupFiles: ['test/setup/apply-migrations.ts'],
        isolate: false,
        sequence: { groupOrder: 0 },
        ...LOADED,
      }),
      workerdProject(
        'worker',
        {
          include: ['test/**/*.test.ts'],
          exclude: [...UNIT, ...OFFICE, ...NODE, ...E2E],
          setupFiles: ['test/setup/apply-migrations.ts'],
          globalSetup: [
            ...STAND_INS,
            'test/setup/gotenberg-stand-in.ts',
            'test/setup/encrypted-pdfs.ts',
            'test/setup/oauth-providers.ts',
          ],
          // One workerd runs the files one after another (isolate: false): starting a runtime and importing the
          // Worker for each file took ~11 s of every file on an idle machine, ~80 s under load. The files share
          // D1, R2 and the queue as clients of one deployment do: each works with its own users (and a random
          // CF-Connecting-IP), and the pipeline's test converters register once (registerChainConverters).
          isolate: false,
          sequence: { groupOrder: 1 },
          ...TWO_AT_ONCE,
          ...LOADED,
        },
        (inject) => ({
          ...standInBindings(inject),
          // The sign-in providers on loopback (test/setup/oauth-providers.ts) and the app they return to.
          AUTH_OAUTH_PROVIDERS: testProviders(inject('oidcProviderUrl')!, inject('oauthStandInUrl')!),
          AUTH_OAUTH_REDIRECT_URLS: 'https://app.example.com/signed-in',
          OIDC_PROVIDER_URL: inject('oidcProviderUrl')!,
          OAUTH_STAND_IN_URL: inject('oauthStandInUrl')!,
        }),
      ),
      workerdProject(
        'worker-office',
        {
          include: OFFICE,
          setupFiles: ['test/setup/apply-migrations.ts'],
          globalSetup: [
            ...STAND_INS,
            'test/setup/office-documents.ts',
            'test/setup/pdf-texts.ts',
            'test/setup/sidecar.ts',
            'test/setup/pdf-inspector.ts',
          ],
          // One workerd for the Office files too (each works with its own users): a runtime per file cost ~6 s idle.
          isolate: false,
          sequence: { groupOrder: 1 },
          ...TWO_AT_ONCE,
          ...LOADED,
        },
        (inject) => ({ ...standInBindings(inject), GOTENBERG_URL: inject('sidecarUrl')! }),
      ),
      {
        test: {
          name: 'node',
          environment: 'node',
          ...ASSERTING,
          include: NODE,
          globalSetup: ['test/setup/office-documents.ts'],
          sequence: { groupOrder: 1 },
          ...TWO_AT_ONCE,
          ...LOADED,
        },
      },
      {
        test: {
          name: 'e2e',
          environment: 'node',
          ...ASSERTING,
          include: E2E,
          // The whisper stand-in first: the Worker's TRANSCRIBE_URL names it.
          globalSetup: ['test/setup/office-documents.ts', 'test/setup/whisper-server.ts', 'test/setup/dev-worker.ts'],
          sequence: { groupOrder: 1 },
          ...TWO_AT_ONCE,
          ...LOADED,
        },
      },
    ],
  },
})
