// The README is the front door and docs/ holds the guides: every relative link in them leads to a file that exists
// (and, with a #fragment, to a heading of it, slugged as GitHub slugs headings), the README stays short enough to
// read in a few minutes, and the settings table of docs/configuration.md names exactly the settings that
// worker/config.ts validates and the wrangler configs declare (STYLE: a setting lives in those three places).
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { unstable_readConfig } from 'wrangler'
import { root } from '../../bench/wrangler-dev.ts'
import { configSchema, loadConfig } from '../../worker/config.ts'

const README_MAX_LINES = 250

function markdownFiles(): string[] {
  const docs = join(root, 'docs')
  return [
    join(root, 'README.md'),
    ...readdirSync(docs)
      .filter((name) => name.endsWith('.md'))
      .map((name) => join(docs, name)),
  ]
}

/** The text outside fenced code blocks, where a `[x](y)` is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '')
}

/** Links and images: `[text](target)` and `![alt](target)`, with an optional title after the target. */
function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!)
}

/** GitHub's heading anchors: lower case, punctuation but hyphens removed, spaces to hyphens, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const match of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = match[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(slug) ?? 0
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
    seen.set(slug, count + 1)
  }
  return anchors
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target)

describe('the README and the guides in docs/', () => {
  it('link only to files that exist, and to headings those files have', () => {
    const broken: string[] = []
    for (const file of markdownFiles()) {
      const text = readFileSync(file, 'utf8')
      for (const target of linkTargets(text).filter((target) => !isExternal(target))) {
        const [path = '', fragment] = target.split('#')
        const linked = path === '' ? file : resolve(dirname(file), decodeURI(path))
        const where = `${relative(root, file)} → ${target}`
        if (!existsSync(linked)) broken.push(`${where}: no such file`)
        else if (fragment && linked.endsWith('.md') && !headingAnchors(readFileSync(linked, 'utf8')).has(fragment)) {
          broken.push(`${where}: no heading with that anchor`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  it('keep the README a front door of at most 250 lines that links every guide', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8')
    expect(readme.split('\n').length).toBeLessThanOrEqual(README_MAX_LINES)
    const linked = new Set(linkTargets(readme).map((target) => target.split('#')[0]))
    const guides = [
      'accounts',
      'files-and-uploads',
      'conversion-and-previews',
      'rules',
      'api-and-client',
      'configuration',
      'deploying',
      'security',
      'benchmarks',
      'tests',
    ]
    expect(guides.filter((guide) => !linked.has(`docs/${guide}.md`))).toEqual([])
    // The two commands stay the way in.
    expect(readme).toMatch(/^npm start\b/m)
    expect(readme).toMatch(/^npm test\b/m)
  })

  it("never hard-code the size of a file in the README's first upload", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8')
    expect(readme).not.toMatch(/x-edgefloor-size:\s*\d/i)
  })

  it("quote FILES_MAX_BYTES's default where they give its figure (issue 29: no stale sizes)", () => {
    const { FILES_MAX_BYTES } = loadConfig({ JWT_SECRET: 'x'.repeat(32) })
    const stale: string[] = []
    for (const file of markdownFiles()) {
      // Prose only: a code example may choose its own sizes (the client's tus threshold).
      const lines = readFileSync(file, 'utf8')
        .replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, ''))
        .split('\n')
      lines.forEach((line, i) => {
        if (!line.includes('`FILES_MAX_BYTES`') && !/one request up to/i.test(line)) return
        for (const [figure, mib] of line.matchAll(/(\d+(?:\.\d+)?) MiB/g))
          if (Number(mib) * 2 ** 20 !== FILES_MAX_BYTES) stale.push(`${relative(root, file)}:${i + 1}: ${figure}`)
      })
    }
    expect(stale).toEqual([])
  })
})

describe('the settings table of docs/configuration.md', () => {
  const table = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8')
  /** The names in the first column of each row (a row may name two, `JWT_ISSUER`, `JWT_AUDIENCE`). */
  const documented = [...table.matchAll(/^\| ((?:`[A-Z0-9_]+`(?:, )?)+) \|/gm)].flatMap((row) =>
    [...row[1]!.matchAll(/`([A-Z0-9_]+)`/g)].map((name) => name[1]!),
  )

  it('names every setting worker/config.ts validates, and no other', () => {
    expect([...documented].sort()).toEqual(Object.keys(configSchema.shape).sort())
  })

  it('names every [vars] entry and secret of wrangler.toml', () => {
    const api = unstable_readConfig({ config: join(root, 'wrangler.toml') })
    const declared = [...Object.keys(api.vars), ...(api.secrets?.required ?? [])]
    expect(declared.filter((name) => !documented.includes(name))).toEqual([])
  })
})
