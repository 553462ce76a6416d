// PNG row filtering in WebAssembly SIMD: for each row, the five filters of the PNG specification (None, Sub, Up,
// Average, Paeth) and the one whose bytes, read as signed, sum to the least (libpng's heuristic). Built by
// `npm run build:wasm` (clang --target=wasm32 -msimd128 -O3) into filter.wasm; the loops are written plainly so
// that clang vectorises them 16 bytes at a time. No libc: the module imports nothing and owns one memory that the
// encoder grows to fit a batch of rows.
#include <stdint.h>

typedef uint8_t u8;

static inline uint32_t weight(u8 v) { return v < 128 ? v : 256u - v; }

/** The Paeth predictor of a (left), b (above), c (above left). */
static inline int16_t paeth(int16_t a, int16_t b, int16_t c) {
  // p = a + b - c; |p - a| = |b - c|, |p - b| = |a - c|, |p - c| = |a + b - 2c|
  int16_t pa = b - c, pb = a - c, pc = a + b - c - c;
  pa = pa < 0 ? -pa : pa;
  pb = pb < 0 ? -pb : pb;
  pc = pc < 0 ? -pc : pc;
  return (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
}

static uint32_t filter_none(const u8 *row, int n, u8 *out) {
  uint32_t sum = 0;
  for (int i = 0; i < n; i++) {
    out[i] = row[i];
    sum += weight(row[i]);
  }
  return sum;
}

static uint32_t filter_sub(const u8 *row, int n, int bpp, u8 *out) {
  uint32_t sum = 0;
  for (int i = 0; i < bpp && i < n; i++) {
    out[i] = row[i];
    sum += weight(row[i]);
  }
  for (int i = bpp; i < n; i++) {
    u8 v = (u8)(row[i] - row[i - bpp]);
    out[i] = v;
    sum += weight(v);
  }
  return sum;
}

static uint32_t filter_up(const u8 *row, const u8 *prev, int n, u8 *out) {
  uint32_t sum = 0;
  for (int i = 0; i < n; i++) {
    u8 v = (u8)(row[i] - prev[i]);
    out[i] = v;
    sum += weight(v);
  }
  return sum;
}

static uint32_t filter_average(const u8 *row, const u8 *prev, int n, int bpp, u8 *out) {
  uint32_t sum = 0;
  for (int i = 0; i < bpp && i < n; i++) {
    u8 v = (u8)(row[i] - (prev[i] >> 1));
    out[i] = v;
    sum += weight(v);
  }
  for (int i = bpp; i < n; i++) {
    u8 v = (u8)(row[i] - (u8)(((uint16_t)row[i - bpp] + prev[i]) >> 1));
    out[i] = v;
    sum += weight(v);
  }
  return sum;
}

static uint32_t filter_paeth(const u8 *row, const u8 *prev, int n, int bpp, u8 *out) {
  uint32_t sum = 0;
  // No left neighbour (a = c = 0): the predictor is the byte above.
  for (int i = 0; i < bpp && i < n; i++) {
    u8 v = (u8)(row[i] - prev[i]);
    out[i] = v;
    sum += weight(v);
  }
  for (int i = bpp; i < n; i++) {
    u8 v = (u8)(row[i] - paeth(row[i - bpp], prev[i], prev[i - bpp]));
    out[i] = v;
    sum += weight(v);
  }
  return sum;
}

/**
 * Filters `rows` rows of `stride` bytes at `input` into `output` (each row its filter byte, then `stride` bytes).
 * The row before the first is at `input - stride` when `has_previous`, else taken as zeros (the image's first
 * row, where Up equals None and Paeth equals Sub, so those two are skipped as libpng does). `scratch` holds
 * 5 × stride bytes. Ties go to the lower filter number.
 */
__attribute__((export_name("filter_rows")))
void filter_rows(const u8 *input, int stride, int rows, int bpp, int has_previous, u8 *scratch, u8 *output) {
  for (int r = 0; r < rows; r++) {
    const u8 *row = input + (long)r * stride;
    const u8 *prev = (r > 0 || has_previous) ? row - stride : 0;
    u8 *out = output + (long)r * (stride + 1);
    uint32_t sums[5];
    sums[0] = filter_none(row, stride, scratch);
    sums[1] = filter_sub(row, stride, bpp, scratch + stride);
    if (prev) {
      sums[2] = filter_up(row, prev, stride, scratch + 2 * stride);
      sums[3] = filter_average(row, prev, stride, bpp, scratch + 3 * stride);
      sums[4] = filter_paeth(row, prev, stride, bpp, scratch + 4 * stride);
    } else {
      // Average against a zero row: row[i] - (row[i - bpp] >> 1).
      uint32_t sum = 0;
      u8 *avg = scratch + 3 * stride;
      for (int i = 0; i < stride; i++) {
        u8 v = (u8)(row[i] - (i >= bpp ? (row[i - bpp] >> 1) : 0));
        avg[i] = v;
        sum += weight(v);
      }
      sums[2] = 0xffffffffu;
      sums[3] = sum;
      sums[4] = 0xffffffffu;
    }
    int best = 0;
    for (int f = 1; f < 5; f++)
      if (sums[f] < sums[best]) best = f;
    out[0] = (u8)best;
    __builtin_memcpy(out + 1, scratch + best * stride, stride);
  }
}

/**
 * Undoes PNG filtering in place (decoding): rows `first` to `end` - 1 of the rows at `data`, each its filter byte
 * then `stride` bytes, become rows of `stride` bytes packed from `data` on (row r moves r + 1 bytes left, over
 * bytes already read); the rows before `first` must have been unfiltered already (a batch continues the last one).
 * The row above row 0 is taken as zeros. Answers 0, or r + 1 when row r has a filter type other than 0–4.
 */
__attribute__((export_name("unfilter_rows")))
int unfilter_rows(u8 *data, int stride, int first, int end, int bpp) {
  for (int r = first; r < end; r++) {
    u8 *row = data + (long)r * stride;
    int type = row[r];
    __builtin_memmove(row, row + r + 1, stride);
    const u8 *prev = r > 0 ? row - stride : 0;
    switch (type) {
    case 0:
      break;
    case 1:
      for (int i = bpp; i < stride; i++) row[i] = (u8)(row[i] + row[i - bpp]);
      break;
    case 2:
      if (prev)
        for (int i = 0; i < stride; i++) row[i] = (u8)(row[i] + prev[i]);
      break;
    case 3:
      if (prev) {
        for (int i = 0; i < bpp && i < stride; i++) row[i] = (u8)(row[i] + (prev[i] >> 1));
        for (int i = bpp; i < stride; i++) row[i] = (u8)(row[i] + (u8)(((uint16_t)row[i - bpp] + prev[i]) >> 1));
      } else {
        for (int i = bpp; i < stride; i++) row[i] = (u8)(row[i] + (row[i - bpp] >> 1));
      }
      break;
    case 4:
      if (prev) {
        for (int i = 0; i < bpp && i < stride; i++) row[i] = (u8)(row[i] + prev[i]);
        for (int i = bpp; i < stride; i++) row[i] = (u8)(row[i] + paeth(row[i - bpp], prev[i], prev[i - bpp]));
      } else {
        // With no row above, Paeth's predictor is the left byte: Sub.
        for (int i = bpp; i < stride; i++) row[i] = (u8)(row[i] + row[i - bpp]);
      }
      break;
    default:
      return r + 1;
    }
  }
  return 0;
}
