// Bundles Uppy (core, Dashboard, tus) and their styles into the console's static files with esbuild:
// public/static/uppy.js (an ES module that public/static/console.js imports) and public/static/uppy.css; and copies
// Swagger UI's prebuilt bundle and styles (swagger-ui-dist) for the API reference at /docs. Run by
// `npm start` and `npm test` (prestart, pretest) and by the tests that serve the console; the output is
// generated, not committed (.gitignore), and the same bytes for the same inputs (no source maps, no timestamps).
// Each file is replaced atomically and only when its bytes change, so a server already serving it (another test
// file's Worker) never reads half a file.
import { build } from 'esbuild'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..')

/** What the console uses, nothing else: Uppy itself, its Dashboard, and the tus uploader. */
const SCRIPT = `
export { default as Uppy } from '@uppy/core'
export { default as Dashboard } from '@uppy/dashboard'
export { default as Tus } from '@uppy/tus'
`
const STYLES = `
@import '@uppy/core/css/style.min.css';
@import '@uppy/dashboard/css/style.min.css';
`

export interface ConsoleBundle {
  script: string
  style: string
  reference: { script: string; style: string }
}

/** Writes uppy.js and uppy.css into `outDir` (public/static by default) and answers their paths. */
export async function buildConsoleBundle(outDir = join(root, 'public', 'static')): Promise<ConsoleBundle> {
  const common = {
    bundle: true,
    minify: true,
    legalComments: 'eof',
    logLevel: 'warning',
    absWorkingDir: root,
    write: false,
  } as const
  const [script, style] = await Promise.all([
    build({
      ...common,
      stdin: { contents: SCRIPT, resolveDir: root, sourcefile: 'uppy-entry.js', loader: 'js' },
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      define: { 'process.env.NODE_ENV': '"production"' },
      outfile: join(outDir, 'uppy.js'),
    }),
    build({
      ...common,
      stdin: { contents: STYLES, resolveDir: root, sourcefile: 'uppy-entry.css', loader: 'css' },
      outfile: join(outDir, 'uppy.css'),
    }),
  ])
  mkdirSync(outDir, { recursive: true })
  return {
    script: replaceIfChanged(join(outDir, 'uppy.js'), script.outputFiles[0]!.contents),
    style: replaceIfChanged(join(outDir, 'uppy.css'), style.outputFiles[0]!.contents),
    reference: copySwaggerUi(outDir),
  }
}

/**
 * Swagger UI as its package builds it (a script defining `SwaggerUIBundle`), less the source map it names but that is
 * not served.
 */
function copySwaggerUi(outDir: string): { script: string; style: string } {
  const dist = join(root, 'node_modules', 'swagger-ui-dist')
  const script = readFileSync(join(dist, 'swagger-ui-bundle.js'), 'utf8').replace(
    /\n\/\/# sourceMappingURL=\S+\s*$/,
    '\n',
  )
  const style = readFileSync(join(dist, 'swagger-ui.css'), 'utf8').replace(
    /\n*\/\*# sourceMappingURL=[^*]+\*\/\s*$/,
    '\n',
  )
  return {
    script: replaceIfChanged(join(outDir, 'swagger-ui.js'), Buffer.from(script)),
    style: replaceIfChanged(join(outDir, 'swagger-ui.css'), Buffer.from(style)),
  }
}

function replaceIfChanged(path: string, bytes: Uint8Array): string {
  let current: Buffer | undefined
  try {
    current = readFileSync(path)
  } catch {}
  if (current?.equals(bytes)) return path
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, bytes)
  renameSync(temporary, path)
  return path
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildConsoleBundle()
