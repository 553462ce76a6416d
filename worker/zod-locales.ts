// zod's locales as the Workers bundle them: English alone. wrangler.toml and wrangler.consumer.toml [alias] this
// module in place of zod's locales index, whose 40-odd languages a Worker would parse at every cold start and never
// use (docs/platform-limits.md, "Startup"). zod's classic schemas install English (zod/v4/locales/en.js) themselves.
export { default as en } from 'zod/v4/locales/en.js'
