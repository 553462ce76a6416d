// Promotes a test account to a role straight in D1 (no route may do that for the first admin).
import { env } from 'cloudflare:test'
import type { TestUser } from './accounts'

export async function grantRole(user: TestUser, role: string): Promise<void> {
  await env.DB.prepare('UPDATE users SET role = ? WHERE id = ?').bind(role, user.id).run()
}
