// Outbound email: one function that picks the configured provider. The message shape lives in message.ts, which
// the providers import too (so no provider imports this module back).
import type { Config } from '../config'
import { sendWithConsole } from './console'
import { sendWithMailChannels } from './mailchannels'
import type { EmailMessage } from './message'

/** Sends the message; throws EmailDeliveryError when the provider refuses or cannot be reached. */
export async function sendEmail(config: Config, message: EmailMessage): Promise<void> {
  if (config.EMAIL_PROVIDER === 'console') return sendWithConsole(config, message)
  return sendWithMailChannels(config, message)
}
