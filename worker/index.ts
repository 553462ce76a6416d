export default {
  async fetch() { return Response.json({ name: 'edgefloor' }) },
} satisfies ExportedHandler<Env>
export class RateLimiter {}
