// Prints the closing line CI reads — "N passed, N failed" — from vitest's JSON results. When the suite did not
// run (typecheck or lint failed first), that failure counts as one failed check.
import { existsSync, readFileSync } from 'node:fs'

const [resultsPath = '.tmp/test-results.json', exitStatus = '0'] = process.argv.slice(2)

if (!existsSync(resultsPath)) {
  console.log(`0 passed, ${exitStatus === '0' ? 0 : 1} failed`)
} else {
  const results = JSON.parse(readFileSync(resultsPath, 'utf8')) as {
    numPassedTests: number
    numFailedTests: number
    numPendingTests: number
    numTodoTests: number
  }
  const failed = results.numFailedTests + (results.numFailedTests === 0 && exitStatus !== '0' ? 1 : 0)
  const skipped = results.numPendingTests + results.numTodoTests
  console.log(`${results.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
}
