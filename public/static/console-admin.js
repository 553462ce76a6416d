// The admin screen, for accounts whose role is `admin` (the API refuses everyone else: 403): find users by part of
// their email or name (GET /admin/users), change a role, mark an address verified or delete an account (the
// rules-based PUT and DELETE /users/:id), and one user's files, jobs and sessions (GET /admin/users/:id/…), ending
// a session. The user opened is in the address (#admin/<id>), so a reload shows the same user.

import { $, api, button, element, formatBytes, formatTime, say, turns } from './console-api.js'

const ROLES = ['user', 'admin']
const message = () => $('#admin-message')

export function clearAdmin() {
  $('#admin-users').replaceChildren()
  $('#admin-user').hidden = true
  for (const selector of ['#admin-files', '#admin-jobs', '#admin-sessions']) $(selector).replaceChildren()
}

/** Opens the screen: the search's results, and the user the address names. */
export async function loadAdmin(userId) {
  await search($('#admin-search input[name=q]').value)
  if (userId) await openUser(userId)
  else $('#admin-user').hidden = true
}

$('#admin-search').addEventListener('submit', async (event) => {
  event.preventDefault()
  await search(new FormData(event.currentTarget).get('q'))
})

const searchTurn = turns()
const userTurn = turns()

async function search(q) {
  const isCurrent = searchTurn()
  try {
    const query = q?.trim() ? `?q=${encodeURIComponent(q.trim())}` : ''
    const { body: users } = await api('GET', `/admin/users${query}`)
    if (!isCurrent()) return
    $('#admin-users').replaceChildren(...users.map(userRow))
    $('#admin-users-empty').hidden = users.length > 0
  } catch (error) {
    say(message(), error.message, true)
  }
}

function userRow(user) {
  const row = element('tr', { data: { id: user._id, email: user.email } })
  const role = element('select', { name: 'role', title: 'Role' })
  for (const name of new Set([...ROLES, user.role])) role.append(element('option', { value: name, text: name, selected: name === user.role }))
  role.addEventListener('change', async () => {
    try {
      const { body } = await api('PUT', `/users/${user._id}`, { json: { role: role.value } })
      say(message(), `${body.email} is now ${body.role}.`)
    } catch (error) {
      role.value = user.role
      say(message(), error.message, true)
    }
  })
  const verified = user.email_verified
    ? element('span', { className: 'verified', text: 'verified' })
    : button(
        'Mark verified',
        async () => {
          const { body } = await api('PUT', `/users/${user._id}`, { json: { email_verified: true } })
          row.replaceWith(userRow({ ...user, ...body }))
          say(message(), `${body.email} is marked verified.`)
        },
        { className: 'secondary', name: 'verify', message: message() },
      )
  const open = button('Files, jobs, sessions', () => (location.hash = `#admin/${user._id}`), { className: 'secondary', name: 'open' })
  const remove = button(
    'Delete',
    async () => {
      if (!confirm(`Delete the account ${user.email} with all its files? This cannot be undone.`)) return
      await api('DELETE', `/users/${user._id}`)
      row.remove()
      if ($('#admin-user').dataset.id === user._id) location.hash = '#admin'
      say(message(), `Deleted ${user.email}.`)
    },
    { className: 'danger', name: 'delete', message: message() },
  )
  row.append(
    element('td', {}, element('span', { className: 'user-email', text: user.email }), element('br'), element('span', { className: 'muted', text: user.name || '—' })),
    element('td', {}, role),
    element('td', {}, verified),
    element('td', { className: 'muted', text: formatTime(user.created_at) }),
    element('td', { className: 'row-actions' }, open, ' ', remove),
  )
  return row
}

// --- one user -------------------------------------------------------------------------------------------

async function openUser(id) {
  const isCurrent = userTurn()
  const panel = $('#admin-user')
  panel.dataset.id = id
  try {
    const [{ body: user }, { body: files }, { body: jobs }, { body: sessions }] = await Promise.all([
      api('GET', `/users/${id}`),
      api('GET', `/admin/users/${id}/files`),
      api('GET', `/admin/users/${id}/jobs`),
      api('GET', `/admin/users/${id}/sessions`),
    ])
    if (!isCurrent()) return
    $('#admin-user-title').textContent = `${user.email} (${user.role}${user.email_verified ? ', verified' : ''})`
    showFiles(files)
    showJobs(jobs)
    showSessions(id, sessions)
    panel.hidden = false
  } catch (error) {
    panel.hidden = true
    say(message(), error.message, true)
  }
}

function showFiles(files) {
  const names = new Map(files.map((file) => [file._id, file.name]))
  $('#admin-files').replaceChildren(
    ...files.map((file) => {
      const from = file.parent_file ? `from ${names.get(file.parent_file) ?? file.parent_file}` : 'uploaded'
      return element(
        'tr',
        { data: { id: file._id } },
        element('td', { text: file.name }),
        element('td', { text: file.extension }),
        element('td', { text: formatBytes(file.size) }),
        element('td', { className: 'muted', text: from }),
        element('td', { className: 'muted', text: formatTime(file.created_at) }),
      )
    }),
  )
  $('#admin-files-empty').hidden = files.length > 0
}

function showJobs(jobs) {
  $('#admin-jobs').replaceChildren(
    ...jobs.map((job) => {
      const failure = job.status === 'failed' ? `: ${job.error_code ?? 'FAILED'} · ${job.error ?? ''}` : ''
      const steps = job.steps.map((step) => `${step.converter} ${step.status}${step.error ? ` (${step.error})` : ''}`).join(' → ')
      return element(
        'tr',
        { data: { id: job._id, status: job.status } },
        element('td', {}, element('span', { className: `job-state ${job.status}`, text: `${job.status}${failure}` })),
        element('td', { className: 'muted', text: steps || '—' }),
        element('td', { className: 'muted', text: formatTime(job.created_at) }),
      )
    }),
  )
  $('#admin-jobs-empty').hidden = jobs.length > 0
}

function showSessions(userId, sessions) {
  $('#admin-sessions').replaceChildren(
    ...sessions.map((session) => {
      const end = button(
        'End',
        async () => {
          await api('DELETE', `/admin/users/${userId}/sessions/${session._id}`)
          await openUser(userId)
        },
        { className: 'danger', name: 'end-session', message: message() },
      )
      return element(
        'tr',
        { data: { id: session._id } },
        element('td', { text: session.device || '—' }),
        element('td', { text: session.address || '—' }),
        element('td', { className: 'muted', text: formatTime(session.created_at) }),
        element('td', { className: 'muted', text: formatTime(session.last_used_at) }),
        element('td', {}, end),
      )
    }),
  )
  $('#admin-sessions-empty').hidden = sessions.length > 0
}
