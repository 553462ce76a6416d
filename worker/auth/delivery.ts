// Sends an account email with a fresh single-use token. Delivery failures are logged and reported as false,
// never thrown: the account operation itself has succeeded and the response says the email was not sent.
import type { Config } from '../config'
import { describeError } from '../errors'
import { sendEmail } from '../email/send'
import { renderAccountEmail, type TemplateName } from './mail-templates'
import { issueToken } from './tokens'
import type { UserRecord } from './users'

export async function deliverAccountEmail(config: Config, template: TemplateName, user: UserRecord): Promise<boolean> {
  const { token } = await issueToken(config, template === 'emailVerification' ? 'verify' : 'reset', user)
  try {
    await sendEmail(config, renderAccountEmail(config, template, user, token))
    return true
  } catch (error) {
    console.error(
      JSON.stringify({ level: 'error', event: 'email_failed', template, userId: user.id, error: describeError(error) }),
    )
    return false
  }
}
