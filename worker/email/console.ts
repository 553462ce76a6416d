// The `console` provider: logs the message (for development), delivers nothing.
import type { Config } from '../config'
import type { EmailMessage } from './message'

export async function sendWithConsole(config: Config, message: EmailMessage): Promise<void> {
  console.log(
    `[email] from: ${config.EMAIL_FROM}\n[email] to: ${message.to}\n[email] subject: ${message.subject}\n${message.text}`,
  )
}
