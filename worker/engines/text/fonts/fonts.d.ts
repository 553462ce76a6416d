// Fonts are bundled as Data modules (wrangler.toml rule for **/*.ttf): the import is the file's bytes.
declare module '*.ttf' {
  const bytes: ArrayBuffer
  export default bytes
}
