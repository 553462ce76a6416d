// Applies the D1 migrations to the test database before each test file (idempotent: applied ones are skipped).
import { applyD1Migrations, env } from 'cloudflare:test'

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS)
