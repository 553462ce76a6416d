// sharp behind a Node HTTP server in a process of its own, for bench/image-to-png: the POSTed image to PNG
// (level 6, adaptive filtering), answered as JSON like the bench Worker's converter route, so that the baseline
// pays the same loopback round trip and process switch as ours. Prints its port on stdout.
import { createServer } from 'node:http'
import sharp from 'sharp'

const server = createServer(async (request, response) => {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const png = await sharp(Buffer.concat(chunks)).png({ compressionLevel: 6, adaptiveFiltering: true }).toBuffer()
  response.setHeader('content-type', 'application/json')
  response.end(JSON.stringify({ bytes: png.byteLength }))
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  console.log(typeof address === 'object' && address ? address.port : 0)
})
