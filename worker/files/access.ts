// Routes that answer a link as well as the bearer token (downloads, previews): who may read the file.
import type { Context } from 'hono'
import { eq } from 'drizzle-orm'
import type { AppEnv } from '../api'
import { bearerToken } from '../auth/middleware'
import { readToken } from '../auth/tokens'
import { files } from '../db/schema'
import { ApiError } from '../errors'
import { fileNotFound, findOwnedFile, type FileRow } from './records'
import { verifyFileToken } from './signed-url'

/**
 * The file a download or preview is for: by the signed token of its record's url or preview_url, or by bearer
 * token (then ownership is checked, and a revoked session is refused as requireAuth refuses it).
 */
export async function fileByLinkOrBearer(c: Context<AppEnv>, id: string, signed: string | undefined): Promise<FileRow> {
  if (signed) {
    const row = await c.var.db.query.files.findFirst({ where: eq(files.id, id) })
    if (!row) throw fileNotFound()
    if (!(await verifyFileToken(c.var.config, signed, row.id, row.userId))) {
      throw new ApiError('FILE_LINK_INVALID')
    }
    return row
  }
  const token = bearerToken(c.req.header('authorization'))
  const claims = token ? await readToken(c.var.config, token, 'auth') : undefined
  if (!claims) throw new ApiError('TOKEN_MISSING', { message: 'missing bearer token or signed file link', headers: { 'www-authenticate': 'Bearer' } })
  // The stamp check of requireAuth: a revoked session must not download either.
  const user = await c.var.db.query.users.findFirst({ columns: { id: true, securityStamp: true }, where: (users, { eq }) => eq(users.id, claims.sub) })
  if (!user || user.securityStamp !== claims.stm) throw new ApiError('TOKEN_INVALID', { headers: { 'www-authenticate': 'Bearer' } })
  return findOwnedFile(c.var.db, user.id, id)
}
