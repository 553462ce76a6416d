// The two account emails (templates `emailVerification` and `passwordReset`), plain text and HTML. They carry no
// text the user chose (the name): both can go to an address nobody has verified, and would relay it there.
import type { Config } from '../config'
import type { EmailMessage } from '../email/message'

export type TemplateName = 'emailVerification' | 'passwordReset'

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

export function renderAccountEmail(
  config: Config,
  template: TemplateName,
  to: { email: string },
  token: string,
): EmailMessage {
  const path = template === 'emailVerification' ? 'verify' : 'reset'
  const link = `${config.APP_URL.replace(/\/$/, '')}/${path}?token=${encodeURIComponent(token)}`
  const greeting = 'Hello,'
  const [subject, action, note] =
    template === 'emailVerification'
      ? ['Verify your email address', 'confirm your email address', 'The link is valid for a limited time.']
      : [
          'Reset your password',
          'choose a new password',
          'If you did not ask for this, ignore this email: your password stays as it is.',
        ]
  const text = `${greeting}\n\nOpen this link to ${action}:\n${link}\n\nOr use this token: ${token}\n\n${note}\n`
  const html =
    `<p>${escapeHtml(greeting)}</p><p>Open this link to ${action}:</p>` +
    `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>` +
    `<p>Or use this token: <code>${escapeHtml(token)}</code></p><p>${escapeHtml(note)}</p>`
  return { to: to.email, subject, text, html }
}
