// The `mailchannels` provider: MailChannels' Email API (POST /tx/v1/send, X-Api-Key), a plain fetch.
import type { Config } from '../config'
import { EmailDeliveryError, parseMailbox, type EmailMessage } from './message'

export async function sendWithMailChannels(config: Config, message: EmailMessage): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (config.MAILCHANNELS_API_KEY) headers['x-api-key'] = config.MAILCHANNELS_API_KEY
  const body = {
    personalizations: [{ to: [{ email: message.to }] }],
    from: parseMailbox(config.EMAIL_FROM),
    subject: message.subject,
    content: [
      { type: 'text/plain', value: message.text },
      { type: 'text/html', value: message.html },
    ],
  }
  let response: Response
  try {
    response = await fetch(config.MAILCHANNELS_API_URL, { method: 'POST', headers, body: JSON.stringify(body) })
  } catch (error) {
    throw new EmailDeliveryError('the email provider could not be reached', { cause: error })
  }
  if (!response.ok) {
    const detail = (await response.text()).slice(0, 500)
    throw new EmailDeliveryError(`the email provider answered ${response.status}: ${detail}`)
  }
}
