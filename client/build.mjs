// Builds the package into dist/: one ES module bundled by esbuild (no dependencies to resolve at install), and
// declarations emitted by tsc from the sources, with their `.ts` imports rewritten to the `.js` files a consumer's
// TypeScript resolves under NodeNext and Bundler alike. Run by `npm pack` (prepack) and `npm run build:client`.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import ts from 'typescript'

const here = dirname(fileURLToPath(import.meta.url))
const dist = join(here, 'dist')
rmSync(dist, { recursive: true, force: true })

await build({
  entryPoints: [join(here, 'index.ts')],
  outfile: join(dist, 'index.js'),
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  legalComments: 'none',
  logLevel: 'warning',
})

const config = ts.getParsedCommandLineOfConfigFile(
  join(here, 'tsconfig.json'),
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => fail([diagnostic]) },
)
const program = ts.createProgram(config.fileNames, config.options)
const emitted = program.emit(undefined, undefined, undefined, true)
fail([...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics])

for (const name of readdirSync(dist).filter((file) => file.endsWith('.d.ts'))) {
  const path = join(dist, name)
  writeFileSync(path, readFileSync(path, 'utf8').replace(/(from\s+['"]\.{1,2}\/[^'"]+?)\.ts(['"])/g, '$1.js$2'))
}

function fail(diagnostics) {
  if (diagnostics.length === 0) return
  console.error(
    ts.formatDiagnosticsWithColorAndContext(diagnostics, {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => here,
      getNewLine: () => '\n',
    }),
  )
  process.exit(1)
}
