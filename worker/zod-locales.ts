// zod's locales as the Workers bundle them: English alone. wrangler.toml and wrangler.consumer.toml [alias] this module
// in place of zod's locales index, which carries 40-odd languages (about 260 KB minified) that a Worker would parse at
// every cold start and never use: zod's classic schemas install English (zod/v4/locales/en.js) by themselves.
export { default as en } from 'zod/v4/locales/en.js'
