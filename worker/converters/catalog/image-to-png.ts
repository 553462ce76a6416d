// Images → optimized PNG (worker/converters/image-to-png.ts): what it reads.
import { describeConverter } from '../converter'

export const imageToPngInfo = describeConverter({
  name: 'image-to-png',
  settings: ['IMAGE_MAX_BYTES', 'IMAGE_MAX_PIXELS', 'IMAGE_MAX_SIDE', 'IMAGE_MAX_DIMENSION'],
  from: ['.jpg', '.jpeg', '.jfif', '.png', '.webp', '.gif', '.bmp', '.tif', '.tiff', '.avif'],
  accepts: ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/bmp', 'image/tiff', 'image/avif'],
  to: '.png',
  refusals: {
    targets: {
      '.txt': 'reading the text in an image needs OCR (optical character recognition), which is not supported',
    },
  },
})
