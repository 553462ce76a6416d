// The baseline of `npm run check:deploy`: the smallest Hono Worker, built and run as the real ones are. Each
// Worker's startup is measured as a ratio against this one.
import { Hono } from 'hono'

const app = new Hono()
app.get('/', (c) => c.text('ok'))

export default app
