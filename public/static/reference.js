// The API reference at /docs: Swagger UI (swagger-ui-dist, copied into /static/swagger-ui.js by
// .ci/build-console.ts: no CDN) rendering /openapi.json. "Authorize" takes a bearer token, which "Try it out"
// sends with each call to this deployment (the document's server). A token from POST /auth/login is taken as
// the authorization by itself, so signing in from the page is enough. Tokens stay in the page's memory only.

const ui = window.SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  displayOperationId: true,
  displayRequestDuration: true,
  filter: true,
  tryItOutEnabled: true,
  persistAuthorization: false,
  defaultModelsExpandDepth: 0,
  responseInterceptor: (response) => {
    // A successful sign-in authorizes the page: the next calls carry its access token.
    const signedIn = response.ok && /\/(auth\/)?login$|\/auth\/refresh$/.test(new URL(response.url).pathname)
    if (signedIn && response.obj?.token) ui.preauthorizeApiKey('bearer', response.obj.token)
    return response
  },
})
window.ui = ui
