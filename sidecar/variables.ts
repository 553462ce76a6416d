// Gotenberg 8's `variables` form field: a Word document (.docx, .docm, .dotx, .dotm) is a template whose ${name}
// placeholders take the given strings, and whose table rows that use ${list.field} repeat once per element of a
// list (${list._index} is the element's 1-based position). Done in the WordprocessingML before LibreOffice opens
// it: text parts only (body, headers, footers, notes, comments), a placeholder found across the runs Word splits
// it into, the value written into the run where it starts (keeping its formatting), "\n" a line break, "\t" a tab.
// Placeholders without a value stay as written.
import { inflateRawSync } from 'node:zlib'
import { appliesVariables, parseVariables, VARIABLES_EXTENSIONS, type Variables } from '../shared/form-rules.ts'
import { entryData, zipEntries } from './inspect.ts'
import { zip } from './zip.ts'

export { appliesVariables, parseVariables, VARIABLES_EXTENSIONS, type Variables }

/** A document the variables cannot be applied to; the message is the client's. */
export class VariablesError extends Error {}

/** A text part read or grown past this is refused (the document's zip was checked for bombs before). */
const MAX_PART_BYTES = 64 * 1024 * 1024
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_.-]*)\}/g
const TEXT_NODE = /<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g
/** Between two text nodes, what ends a run of text: a placeholder never spans a paragraph, break or tab. */
const TEXT_BOUNDARY = /<w:p[\s/>]|<\/w:p>|<w:(?:br|cr|tab)[\s/>]/
const TEXT_PART = /^word\/(?:document|header\d*|footer\d*|footnotes|endnotes|comments)\.xml$/
const ROW_TAG = /<w:tr[\s>]|<\/w:tr>/g

const escapeXml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/** A value as the content of a <w:t>: escaped, line breaks and tabs as the run's own break and tab elements. */
function runText(value: string): string {
  return value
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.split('\t').map(escapeXml).join('</w:t><w:tab/><w:t xml:space="preserve">'))
    .join('</w:t><w:br/><w:t xml:space="preserve">')
}

interface TextNode {
  start: number
  end: number
  text: string
}

/** The text nodes of a fragment, in groups that no paragraph, break or tab separates. */
function textGroups(xml: string): TextNode[][] {
  const groups: TextNode[][] = []
  let previous: TextNode | undefined
  for (const match of xml.matchAll(TEXT_NODE)) {
    const node = { start: match.index, end: match.index + match[0].length, text: match[1]! }
    if (!previous || TEXT_BOUNDARY.test(xml.slice(previous.end, node.start))) groups.push([])
    groups.at(-1)!.push(node)
    previous = node
  }
  return groups
}

/** The placeholder names a fragment uses, placeholders split across runs included. */
function placeholderNames(xml: string): string[] {
  return textGroups(xml).flatMap((group) =>
    [
      ...group
        .map((node) => node.text)
        .join('')
        .matchAll(PLACEHOLDER),
    ].map((match) => match[1]!),
  )
}

/** Replaces the placeholders that have a value; undefined when none did. */
function fillPlaceholders(xml: string, values: ReadonlyMap<string, string>): string | undefined {
  if (!xml.includes('{')) return undefined
  const rewritten = new Map<TextNode, string>()
  for (const group of textGroups(xml)) {
    const joined = group.map((node) => node.text).join('')
    const found = [...joined.matchAll(PLACEHOLDER)].filter((match) => values.has(match[1]!))
    if (found.length === 0) continue
    let offset = 0
    for (const node of group) {
      const [from, to] = [offset, offset + node.text.length]
      offset = to
      let out = ''
      let cursor = from
      let touched = false
      for (const match of found) {
        const [start, end] = [match.index, match.index + match[0].length]
        if (end <= from || start >= to) continue
        touched = true
        // Written whole in the node where it starts; the nodes it runs on into only lose its characters.
        if (start >= from) out += joined.slice(cursor, start) + runText(values.get(match[1]!)!)
        cursor = Math.min(end, to)
      }
      if (touched) rewritten.set(node, out + joined.slice(cursor, to))
    }
  }
  if (rewritten.size === 0) return undefined
  let out = ''
  let cursor = 0
  for (const [node, text] of [...rewritten].sort((a, b) => a[0].start - b[0].start)) {
    out += `${xml.slice(cursor, node.start)}<w:t xml:space="preserve">${text}</w:t>`
    cursor = node.end
  }
  return out + xml.slice(cursor)
}

interface Row {
  start: number
  end: number
  rows: Row[]
}

/** Repeats the table rows that use a list's fields; undefined when none does (or the row tags do not balance). */
function repeatRows(xml: string, lists: Variables['lists']): string | undefined {
  if (lists.size === 0 || !xml.includes('{')) return undefined
  const root: Row = { start: 0, end: xml.length, rows: [] }
  const stack = [root]
  for (const tag of xml.matchAll(ROW_TAG)) {
    if (tag[0][1] !== '/') {
      const row = { start: tag.index, end: -1, rows: [] }
      stack.at(-1)!.rows.push(row)
      stack.push(row)
    } else {
      if (stack.length === 1) return undefined
      stack.pop()!.end = tag.index + tag[0].length
    }
  }
  if (stack.length !== 1) return undefined
  let changed = false
  let size = xml.length
  const render = (row: Row, isRow: boolean): string => {
    // `own` leaves the nested rows out: a nested table's row repeats by itself, not the row around it.
    let body = ''
    let own = ''
    let cursor = row.start
    for (const nested of row.rows) {
      body += xml.slice(cursor, nested.start) + render(nested, true)
      own += xml.slice(cursor, nested.start)
      cursor = nested.end
    }
    body += xml.slice(cursor, row.end)
    own += xml.slice(cursor, row.end)
    if (!isRow) return body
    const used = [
      ...new Set(
        placeholderNames(own)
          .map((name) => name.split('.'))
          .filter((parts) => parts.length > 1 && lists.has(parts[0]!))
          .map((parts) => parts[0]!),
      ),
    ].sort()
    if (used.length === 0) return body
    if (used.length > 1)
      throw new VariablesError(
        `variables cannot repeat a table row that uses more than one list: '${used.join("', '")}'`,
      )
    const list = used[0]!
    const elements = lists.get(list)!
    size += body.length * (elements.length - 1)
    if (size > MAX_PART_BYTES)
      throw new VariablesError(`variables make the document too large: list '${list}' with ${elements.length} elements`)
    changed = true
    return elements
      .map((element, i) => {
        const fields = new Map([
          [`${list}._index`, String(i + 1)],
          ...Object.entries(element).map(([field, value]) => [`${list}.${field}`, value] as [string, string]),
        ])
        return fillPlaceholders(body, fields) ?? body
      })
      .join('')
  }
  const out = render(root, false)
  return changed ? out : undefined
}

/** The document with its variables applied; throws VariablesError for a document they cannot apply to. */
export function applyVariables(name: string, bytes: Uint8Array, variables: Variables): Uint8Array {
  const entries = zipEntries(bytes)
  if (!entries) throw new VariablesError(`variables cannot be applied to '${name}': it is not a Word document`)
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })
  const encoder = new TextEncoder()
  let changed = false
  const out = entries.map((entry) => {
    const stored = entryData(bytes, entry)
    if (entry.method !== 0 && entry.method !== 8)
      throw new VariablesError(
        `variables cannot be applied to '${name}': its part '${entry.name}' uses an unknown compression`,
      )
    let data: Uint8Array
    try {
      data = entry.method === 8 ? new Uint8Array(inflateRawSync(stored, { maxOutputLength: MAX_PART_BYTES })) : stored
    } catch {
      throw new VariablesError(`variables cannot be applied to '${name}': its part '${entry.name}' cannot be read`)
    }
    if (!TEXT_PART.test(entry.name)) return { name: entry.name, bytes: data, deflate: entry.method === 8 }
    let xml: string
    try {
      xml = decoder.decode(data)
    } catch {
      throw new VariablesError(`variables cannot be applied to '${name}': its part '${entry.name}' is not UTF-8`)
    }
    // Rows repeat first, so that plain variables are filled in every copy.
    const repeated = repeatRows(xml, variables.lists) ?? xml
    const filled = fillPlaceholders(repeated, variables.values) ?? repeated
    if (filled === xml) return { name: entry.name, bytes: data, deflate: entry.method === 8 }
    changed = true
    return { name: entry.name, bytes: encoder.encode(filled), deflate: true }
  })
  return changed ? zip(out) : bytes
}
