// The outbound email message, its sender mailbox and the delivery error: shared by send() and its providers.

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

export class EmailDeliveryError extends Error {
  override readonly name = 'EmailDeliveryError'
}
