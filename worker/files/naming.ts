// The names of stored files: a download's, and a converted file's by the seed's rule "<name> (<n> of <m>)", where
// <name> is the uploaded file's name without its extension (at every step of a chain) and the extension lives only
// in the record's `extension`.
import { sql } from 'drizzle-orm'
import type { Database } from '../db/client'
import type { FileRow } from './records'

/** The name without its extension, when it ends with it (a name the owner changed may not). */
export function nameWithoutExtension(name: string, extension: string): string {
  return extension && name.toLowerCase().endsWith(extension.toLowerCase()) && name.length > extension.length
    ? name.slice(0, -extension.length)
    : name
}

/** The name to offer a download under: the record's name, with its extension when the name lacks it. */
export function downloadName(row: Pick<FileRow, 'name' | 'extension'>): string {
  return nameWithoutExtension(row.name, row.extension) === row.name ? `${row.name}${row.extension}` : row.name
}

/**
 * The base of a converted file's name: the name of the file the user uploaded (the top of the chain `file` is
 * in), without its extension, so every step of a chain names its outputs after the upload.
 */
export async function conversionBaseName(db: Database, file: FileRow): Promise<string> {
  if (!file.parentId) return nameWithoutExtension(file.name, file.extension)
  const [top] = await db.all<{ name: string; extension: string }>(sql`
    WITH RECURSIVE up(id, parent_id, name, extension, depth) AS (
      SELECT id, parent_id, name, extension, 0 FROM files WHERE id = ${file.parentId} AND user_id = ${file.userId}
      UNION ALL
      SELECT files.id, files.parent_id, files.name, files.extension, up.depth + 1 FROM files JOIN up ON files.id = up.parent_id
      WHERE files.user_id = ${file.userId} AND up.depth < 64
    )
    SELECT name, extension FROM up WHERE parent_id IS NULL`)
  return top ? nameWithoutExtension(top.name, top.extension) : file.name
}

/** A converted file's name: the base, then its place among the step's outputs. */
export function outputName(baseName: string, position: number, total: number): string {
  return `${baseName} (${position} of ${total})`
}
