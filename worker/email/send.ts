// Outbound email: one message shape, one function that picks the configured provider.
import type { Config } from '../config'
import { sendWithConsole } from './console'
import { sendWithMailChannels } from './mailchannels'

export interface EmailMessage {
  to: string
  subject: string
  text: string
  html: string
}

export interface Mailbox {
  email: string
  name?: string
}

/** "Edgefloor <no-reply@example.com>" or "no-reply@example.com" → { email, name }. */
export function parseMailbox(value: string): Mailbox {
  const match = /^\s*(.*?)\s*<([^<>\s]+@[^<>\s]+)>\s*$/.exec(value)
  if (match) return match[1] ? { email: match[2]!, name: match[1].replace(/^"|"$/g, '') } : { email: match[2]! }
  return { email: value.trim() }
}

/** Sends the message; throws EmailDeliveryError when the provider refuses or cannot be reached. */
export async function sendEmail(config: Config, message: EmailMessage): Promise<void> {
  if (config.EMAIL_PROVIDER === 'console') return sendWithConsole(config, message)
  return sendWithMailChannels(config, message)
}

export class EmailDeliveryError extends Error {
  override readonly name = 'EmailDeliveryError'
}
