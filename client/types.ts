// The API's records as they travel on the wire (snake_case, as the Basefloor contract names them). Written out
// here so that the package's types stand alone; test/client/types.test.ts holds them equal to the Worker's own
// response schemas, so they cannot drift.
import type { ErrorCode } from './errors.ts'

/** A file record (`GET /files/:id`). */
export interface FileRecord {
  _id: string
  /** Converted files are named "<name> (<n> of <m>)" after the uploaded file, without extension. */
  name: string
  extension: string
  content_type: string
  size: number
  /** Download URL with a signed token, valid for the server's FILES_URL_TTL. */
  url: string
  /** Preview URL with the same signed token; null for kinds without previews (audio). */
  preview_url: string | null
  parent_file: string | null
  /** SHA-256 of the bytes, hex. */
  hash: string
  prefix: string
  file_modified_at: string | null
  part_index: number | null
  part_total: number | null
  /** Facts about the content: page_count, width, height, … */
  metadata: Record<string, unknown>
  job_id: string | null
  created_at: string
  updated_at: string
}

/** `GET /files/:id` adds the file's direct children. */
export interface FileWithChildren extends FileRecord {
  files: FileRecord[]
}

export type JobStatus = 'queued' | 'running' | 'done' | 'failed'
export type StepStatus = 'queued' | 'running' | 'done' | 'failed' | 'split'

/** One step of a job: one converter run on one source (or a range of its pages). */
export interface JobStep {
  _id: string
  converter: string
  source_file: string
  part: { start: number; end: number } | null
  status: StepStatus
  attempts: number
  error: string | null
  outputs: string[]
}

/** A conversion job (`GET /jobs/:id`). */
export interface Job {
  _id: string
  file_id: string
  status: JobStatus
  error: string | null
  /** The code of the failure (the error table), chosen by the converter that failed; null unless failed. */
  error_code: ErrorCode | null
  /** The extension the chain ends at, when the request named one. */
  to: string | null
  options: Record<string, string | number | boolean>
  steps: JobStep[]
  /** Every file the job created, in chain order. */
  files: FileRecord[]
  created_at: string
  updated_at: string
  finished_at: string | null
  /** The job's events stream, signed for this job only: a browser's EventSource opens it without headers. */
  events_url: string
  /** Present when the job has a callback_url: the key of its webhook signatures. */
  webhook_secret?: string
}

/** The signed-in user (`GET /auth/user`); custom user fields come as extra keys. */
export interface User {
  _id: string
  email: string
  name: string
  role: string
  email_verified: boolean
  created_at: string
  updated_at: string
  [field: string]: unknown
}

/** What `POST /auth/login` and `POST /auth/refresh` answer. */
export interface Session {
  token: string
  /** Opaque and single-use: rotated on every refresh. */
  refresh_token: string
  /** Seconds the access token is valid for. */
  expires_in: number
}

export interface LoginResult extends Session {
  user: { _id: string; email: string; name: string; role: string }
}

export interface RegisterResult {
  user: User
  email_sent: boolean
  message: string
}

/**
 * What `PUT /auth/user` changes: name, custom fields with `u`, and (confirmed by `current_password`) email or password.
 */
export interface AccountChanges {
  name?: string
  /** A new address: unverified until its owner follows the link mailed to it. */
  email?: string
  /** A new password: every session ends, and the answer carries a new one for this device. */
  password?: string
  /** Confirms an email or password change; an account without a password confirms with a recent sign-in instead. */
  current_password?: string
  [field: string]: unknown
}

/** What `PUT /auth/user` answers. */
export interface AccountUpdate {
  user: User
  message: string
  /** Present when the email changed: whether the verification email to the new address went. */
  email_sent?: boolean
  /** Present when the password changed: the new session of this device (the client keeps it). */
  session?: Session
}

/** One live session (`GET /auth/sessions`). */
export interface SessionInfo {
  _id: string
  device: string
  address: string
  created_at: string
  last_used_at: string
  current: boolean
}

/** `GET /convert/:extension`: what a file of that extension becomes. */
export interface ConversionTargets {
  extension: string
  accepted: boolean
  /** The default chain's next extension; null when nothing converts it. */
  to: string | null
  /** Every reachable target, nearest first. */
  targets: string[]
  /** Why a converter refuses this kind of input, or why its default target cannot be made here. */
  reason?: string
  /** Targets that cannot be made here, each with what to set (a provider that is not configured). */
  unavailable?: Record<string, string>
}
