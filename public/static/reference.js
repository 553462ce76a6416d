// Renders /openapi.json as a reference page: operations grouped by tag, their parameters, bodies, responses
// (schemas expanded from components) and a curl line. Built with DOM calls only: no HTML from the document is
// ever parsed, so descriptions cannot inject markup.

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options']
const MAX_DEPTH = 5

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== false) node.setAttribute(name, value === true ? '' : value)
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue
    node.append(child instanceof Node ? child : String(child))
  }
  return node
}

/** Text with `code` spans, the only markup descriptions use. */
function prose(text, tag = 'p') {
  if (!text) return null
  const parts = String(text).split(/(`[^`]+`)/)
  return el(tag, { class: 'prose' }, parts.map((part) => (part.startsWith('`') && part.endsWith('`') ? el('code', {}, part.slice(1, -1)) : part)))
}

function anchorOf(method, path) {
  return `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-').replace(/-+$/, '')
}

function createResolver(document) {
  return (schema) => {
    if (!schema || !schema.$ref) return { schema, name: undefined }
    const name = schema.$ref.split('/').pop()
    return { schema: document.components?.schemas?.[name] ?? {}, name }
  }
}

function typeLabel(schema, resolve) {
  const { schema: resolved, name } = resolve(schema)
  if (!resolved) return 'any'
  if (name) return name
  if (resolved.enum) return resolved.enum.map((value) => JSON.stringify(value)).join(' | ')
  if (resolved.const !== undefined) return JSON.stringify(resolved.const)
  if (resolved.anyOf || resolved.oneOf) return (resolved.anyOf ?? resolved.oneOf).map((item) => typeLabel(item, resolve)).join(' | ')
  const type = Array.isArray(resolved.type) ? resolved.type.join(' | ') : resolved.type
  if (type === 'array') return `array of ${typeLabel(resolved.items, resolve)}`
  const format = resolved.format ? ` (${resolved.format})` : ''
  return `${type ?? 'object'}${format}`
}

function constraints(schema) {
  const notes = []
  if (schema.minLength !== undefined) notes.push(`min length ${schema.minLength}`)
  if (schema.maxLength !== undefined) notes.push(`max length ${schema.maxLength}`)
  if (schema.minimum !== undefined) notes.push(`≥ ${schema.minimum}`)
  if (schema.maximum !== undefined) notes.push(`≤ ${schema.maximum}`)
  if (schema.pattern) notes.push(`pattern ${schema.pattern}`)
  if (schema.default !== undefined) notes.push(`default ${JSON.stringify(schema.default)}`)
  if (schema.example !== undefined) notes.push(`e.g. ${JSON.stringify(schema.example)}`)
  return notes.length ? el('span', { class: 'muted' }, ` · ${notes.join(' · ')}`) : null
}

/** An expandable tree of an object's fields; arrays show their items' fields. */
function schemaView(schema, resolve, depth = 0, seen = new Set()) {
  const { schema: resolved, name } = resolve(schema)
  if (!resolved || depth > MAX_DEPTH || (name && seen.has(name))) return null
  const nextSeen = name ? new Set([...seen, name]) : seen
  if (resolved.type === 'array' || resolved.items) return schemaView(resolved.items, resolve, depth, nextSeen)
  const variants = resolved.anyOf ?? resolved.oneOf
  if (variants) {
    const views = variants.map((variant) => schemaView(variant, resolve, depth + 1, nextSeen)).filter(Boolean)
    return views.length ? el('div', { class: 'variants' }, views.map((view, i) => el('div', {}, el('span', { class: 'muted' }, i ? 'or' : 'one of'), view))) : null
  }
  const properties = resolved.properties
  if (!properties) return null
  const required = new Set(resolved.required ?? [])
  return el(
    'ul',
    { class: 'fields' },
    Object.entries(properties).map(([field, fieldSchema]) => {
      const resolvedField = resolve(fieldSchema).schema ?? {}
      const nested = schemaView(fieldSchema, resolve, depth + 1, nextSeen)
      return el(
        'li',
        {},
        el('code', { class: 'field' }, field),
        ' ',
        el('span', { class: 'type' }, typeLabel(fieldSchema, resolve)),
        required.has(field) ? el('span', { class: 'required' }, ' required') : null,
        constraints(resolvedField),
        prose(fieldSchema.description ?? resolvedField.description, 'div'),
        nested,
      )
    }),
  )
}

function contentView(content, resolve) {
  return Object.entries(content ?? {}).map(([mediaType, media]) =>
    el('div', { class: 'media' }, el('div', {}, el('code', {}, mediaType), ' ', el('span', { class: 'type' }, typeLabel(media.schema, resolve))), schemaView(media.schema, resolve)),
  )
}

function parametersView(parameters, resolve) {
  if (!parameters?.length) return null
  return el(
    'section',
    {},
    el('h4', {}, 'Parameters'),
    el(
      'table',
      {},
      el('thead', {}, el('tr', {}, el('th', {}, 'Name'), el('th', {}, 'In'), el('th', {}, 'Type'), el('th', {}, 'Description'))),
      el(
        'tbody',
        {},
        parameters.map((parameter) =>
          el(
            'tr',
            {},
            el('td', {}, el('code', {}, parameter.name), parameter.required ? el('span', { class: 'required' }, ' required') : null),
            el('td', {}, parameter.in),
            el('td', { class: 'type' }, typeLabel(parameter.schema, resolve), constraints(resolve(parameter.schema).schema ?? {})),
            el('td', {}, prose(parameter.description ?? resolve(parameter.schema).schema?.description, 'span')),
          ),
        ),
      ),
    ),
  )
}

function curlLine(method, path, operation, origin) {
  const parts = ['curl']
  if (method !== 'get') parts.push(`-X ${method.toUpperCase()}`)
  parts.push(`'${origin}${path}'`)
  if (operation.security?.length) parts.push(`-H "authorization: Bearer $TOKEN"`)
  const content = operation.requestBody?.content ?? {}
  if (content['application/json']) parts.push(`-H 'content-type: application/json' -d '{…}'`)
  else if (content['multipart/form-data']) parts.push(`-F 'file=@report.docx'`)
  return parts.join(' ')
}

function operationView(method, path, operation, resolve, origin) {
  const isProtected = operation.security?.some((scheme) => Object.keys(scheme).length > 0)
  return el(
    'article',
    { class: 'operation', id: anchorOf(method, path) },
    el('h3', {}, el('span', { class: `method ${method}` }, method.toUpperCase()), ' ', el('code', { class: 'path' }, path), isProtected ? el('span', { class: 'lock', title: 'Needs a bearer token' }, 'bearer token') : null),
    operation.summary ? el('p', { class: 'summary' }, operation.summary) : null,
    prose(operation.description),
    parametersView(operation.parameters, resolve),
    operation.requestBody ? el('section', {}, el('h4', {}, `Request body${operation.requestBody.required ? '' : ' (optional)'}`), prose(operation.requestBody.description), contentView(operation.requestBody.content, resolve)) : null,
    el(
      'section',
      {},
      el('h4', {}, 'Responses'),
      Object.entries(operation.responses ?? {}).map(([status, response]) =>
        el('details', { class: `response s${status[0]}`, open: status.startsWith('2') ? true : undefined }, el('summary', {}, el('strong', {}, status), ' ', response.description ?? ''), contentView(response.content, resolve)),
      ),
    ),
    el('pre', { class: 'curl' }, curlLine(method, path, operation, origin)),
  )
}

function render(document) {
  const resolve = createResolver(document)
  const groups = new Map()
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method]
      if (!operation) continue
      const tag = operation.tags?.[0] ?? 'Other'
      if (!groups.has(tag)) groups.set(tag, [])
      groups.get(tag).push({ method, path, operation: { ...operation, parameters: [...(item.parameters ?? []), ...(operation.parameters ?? [])] } })
    }
  }
  // The pages' own routes come last: readers come for the API.
  const documentation = groups.get('Documentation')
  if (documentation) {
    groups.delete('Documentation')
    groups.set('Documentation', documentation)
  }
  const toc = globalThis.document.getElementById('toc')
  const main = globalThis.document.getElementById('reference')
  toc.replaceChildren(
    ...[...groups].map(([tag, operations]) =>
      el('div', {}, el('h2', {}, tag), el('ul', {}, operations.map(({ method, path }) => el('li', {}, el('a', { href: `#${anchorOf(method, path)}` }, el('span', { class: `method ${method}` }, method.toUpperCase()), ' ', path))))),
    ),
  )
  const info = document.info ?? {}
  main.replaceChildren(
    el('h1', {}, info.title ?? 'API', ' ', el('small', { class: 'muted' }, info.version ?? '')),
    prose(info.description),
    el('p', { class: 'prose' }, 'Authenticated operations take ', el('code', {}, 'Authorization: Bearer <token>'), ' with the token from ', el('code', {}, 'POST /auth/login'), '. Errors answer JSON ', el('code', {}, '{ "message": … }'), '.'),
    ...[...groups].map(([tag, operations]) => el('section', { class: 'tag' }, el('h2', {}, tag), operations.map(({ method, path, operation }) => operationView(method, path, operation, resolve, location.origin)))),
  )
  if (location.hash) globalThis.document.getElementById(location.hash.slice(1))?.scrollIntoView()
}

fetch('/openapi.json')
  .then((response) => {
    if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`)
    return response.json()
  })
  .then(render)
  .catch((error) => {
    document.getElementById('reference').replaceChildren(el('p', { class: 'error' }, String(error.message ?? error)))
  })
