// The Office documents made by the global setup (test/setup/office-documents.ts), as bytes for workerd tests,
// which cannot read them from disk.
import { inject } from 'vitest'
import type { OfficeDocumentName } from '../setup/office-documents'

export function officeDocument(name: OfficeDocumentName): Uint8Array {
  return Uint8Array.from(atob(inject('officeDocuments')[name]), (char) => char.charCodeAt(0))
}
