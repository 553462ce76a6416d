// `npm start`'s ports (.ci/local-ports.ts): PORT and SIDECAR_PORT move the two servers, and the settings that name
// them follow unless they are given; a value that is not a TCP port stops the start with the variable's name.
import { describe, expect, it } from 'vitest'
import { localPorts } from '../../.ci/local-ports.ts'

describe("npm start's ports", () => {
  it('serves on 8787 and 3000 with the configured URLs when nothing is set', () => {
    expect(localPorts({})).toEqual({ apiPort: 8787, sidecarPort: 3000, settings: {} })
  })

  it('moves APP_URL and GOTENBERG_URL with PORT and SIDECAR_PORT', () => {
    expect(localPorts({ PORT: '9000', SIDECAR_PORT: '3100' })).toEqual({
      apiPort: 9000,
      sidecarPort: 3100,
      settings: { APP_URL: 'http://127.0.0.1:9000', GOTENBERG_URL: 'http://127.0.0.1:3100' },
    })
  })

  it('keeps APP_URL and GOTENBERG_URL the environment gives', () => {
    expect(
      localPorts({
        PORT: '9000',
        SIDECAR_PORT: '3100',
        APP_URL: 'https://app.example',
        GOTENBERG_URL: 'http://10.0.0.5:3000',
      }).settings,
    ).toEqual({})
  })

  it.each(['0', '65536', 'http', '80.5', '-1'])('refuses PORT=%s naming the variable', (value) => {
    expect(() => localPorts({ PORT: value })).toThrow(`invalid PORT: "${value}" is not a TCP port (1 to 65535)`)
  })
})
