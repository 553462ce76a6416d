// Vite's `?raw` imports (a file's text), for tests that compare documentation with the code.
declare module '*?raw' {
  const text: string
  export default text
}
