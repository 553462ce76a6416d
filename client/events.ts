// Server-Sent Events read with fetch (an EventSource cannot send the bearer header): the `job` events of
// GET /jobs/:id/events, parsed as the HTML standard's event-stream format says (fields per line, an event per blank
// line, `data` lines joined by newlines, comments starting with a colon).

export interface ServerSentEvent {
  event: string
  data: string
  id?: string
}

/** The events of a text/event-stream body, in order, until the stream ends. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let event: { event?: string; data: string[]; id?: string } = { data: [] }
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      buffer += decoder.decode(value, { stream: true })
      let newline = buffer.search(/\r\n|\r|\n/)
      // A CR that ends the buffer may be the first half of a CRLF split across chunks: wait for the next one.
      while (newline >= 0 && !(buffer[newline] === '\r' && newline === buffer.length - 1)) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1))
        if (line === '') {
          if (event.data.length > 0)
            yield { event: event.event ?? 'message', data: event.data.join('\n'), id: event.id }
          event = { data: [] }
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':')
          const field = colon < 0 ? line : line.slice(0, colon)
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
          if (field === 'event') event.event = value
          else if (field === 'data') event.data.push(value)
          else if (field === 'id') event.id = value
        }
        newline = buffer.search(/\r\n|\r|\n/)
      }
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
}
