// oidc-provider ships no types; the test setup uses a few of its methods (test/setup/oauth-providers.ts).
declare module 'oidc-provider'
