// globalThis.ImageData for the Squoosh codecs, which answer their pixels as one. Workers have none, and each
// emscripten glue (the WebP and AVIF codecs) defines it when missing, as a class inside its module factory: that
// class closes over the first instance's scope, so the first codec of an isolate kept its heap for the isolate's
// life (the AVIF encoder's 33 MiB, check:deploy). Defined here first, at module scope, it closes over nothing.
// @jsquash/png's glue used to define one the same way when it loaded.
if (!('ImageData' in globalThis)) {
  Object.defineProperty(globalThis, 'ImageData', {
    value: class ImageData {
      constructor(
        readonly data: Uint8ClampedArray,
        readonly width: number,
        readonly height: number,
      ) {}
    },
    writable: true,
    configurable: true,
  })
}
