// What follows a stored upload. With FILES_AUTO_CONVERT the conversion chain starts in the background.
import type { Context } from 'hono'
import type { AppEnv } from '../api'
import type { FileRow } from './records'

export async function afterUpload(_c: Context<AppEnv>, _row: FileRow): Promise<void> {}
