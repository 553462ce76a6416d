// Two projects: `worker` runs inside workerd with real D1, R2 and Queues (the Worker under test is
// worker/index.ts, configured by wrangler.toml); `node` runs the sidecar and end-to-end suites on Node 22.
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-plugin'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const root = fileURLToPath(new URL('.', import.meta.url))

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          // Values that global setups `provide` (loopback stand-ins' URLs) become bindings here.
          cloudflareTest(async ({ inject }) => ({
            wrangler: { configPath: `${root}wrangler.toml` },
            remoteBindings: false,
            miniflare: {
              bindings: {
                JWT_SECRET: 'test-secret-at-least-32-characters-long!!',
                // A quota so large no test reaches it by uploading, finite so a test can bring one user near it
                // (a record standing for what they store) and watch the queue consumer refuse an output.
                FILES_QUOTA_BYTES: String(2 ** 40),
                TEST_MIGRATIONS: await readD1Migrations(`${root}migrations`),
                EMAIL_PROVIDER: 'mailchannels',
                MAILCHANNELS_API_URL: `${inject('mailCatcherUrl')}/tx/v1/send`,
                MAILCHANNELS_API_KEY: 'test-mailchannels-key',
                MAIL_CATCHER_URL: inject('mailCatcherUrl'),
                // Workers AI has no local mode: TRANSCRIBE_PROVIDER=auto (the default) falls back from the local
                // AI binding to TRANSCRIBE_URL, a loopback whisper.cpp stand-in.
                TRANSCRIBE_URL: inject('whisperUrl'),
                TRANSCRIBE_API_KEY: 'test-transcribe-key',
                WHISPER_URL: inject('whisperUrl'),
                GOTENBERG_URL: inject('sidecarUrl'),
                WEBHOOK_RECEIVER_URL: inject('webhookReceiverUrl'),
              },
            },
          })),
        ],
        test: {
          name: 'worker',
          include: ['test/**/*.test.ts'],
          exclude: ['test/sidecar/**', 'test/e2e/**'],
          setupFiles: ['test/setup/apply-migrations.ts'],
          globalSetup: ['test/setup/office-documents.ts', 'test/setup/mail-catcher.ts', 'test/setup/whisper-server.ts', 'test/setup/sidecar.ts', 'test/setup/gotenberg-stand-in.ts', 'test/setup/webhook-receiver.ts'],
        },
      },
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/sidecar/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          globalSetup: ['test/setup/office-documents.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
})
