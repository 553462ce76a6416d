// Where the client keeps its tokens. The store is read before every request and written after every sign-in,
// refresh and sign-out, so a browser tab can keep its session across reloads (webStorageTokenStore) and a server
// can keep one per user. Synchronous on purpose: a request never waits for the store.

/** The tokens of one signed-in session. */
export interface Tokens {
  /** The access token (a JWT), sent as `Authorization: Bearer`. */
  token: string
  /** The opaque, single-use refresh token; absent when the client was given an access token alone. */
  refresh_token?: string | undefined
  /** When the access token expires, in epoch milliseconds; absent when unknown. */
  expires_at?: number | undefined
}

export interface TokenStore {
  get(): Tokens | undefined
  /** undefined: signed out. */
  set(tokens: Tokens | undefined): void
}

/** Tokens in memory only: gone with the process or the page. The default. */
export function memoryTokenStore(initial?: Tokens): TokenStore {
  let tokens = initial
  return {
    get: () => tokens,
    set: (next) => {
      tokens = next
    },
  }
}

/** The part of the Web Storage API the store uses (`localStorage`, `sessionStorage`, or your own). */
export interface KeyValueStorage {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

/**
 * Tokens in a Web Storage area under one key, as JSON. `sessionStorage` ends with the tab; `localStorage` keeps
 * the session until sign-out, readable by any script of the page's origin: choose knowing that.
 */
export function webStorageTokenStore(storage: KeyValueStorage, key = 'edgefloor.tokens'): TokenStore {
  return {
    get() {
      const text = storage.getItem(key)
      if (!text) return undefined
      try {
        const tokens = JSON.parse(text) as Tokens
        return typeof tokens.token === 'string' ? tokens : undefined
      } catch {
        return undefined
      }
    },
    set(tokens) {
      if (tokens) storage.setItem(key, JSON.stringify(tokens))
      else storage.removeItem(key)
    },
  }
}
