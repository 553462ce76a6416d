// PNG row filtering in WebAssembly SIMD: for each row, the five filters of the PNG specification (None, Sub, Up,
// Average, Paeth) and the one whose bytes, read as signed, sum to the least (libpng's heuristic). Built by
// `npm run build:wasm` (clang --target=wasm32 -msimd128 -O3) into filter.wasm; the filter loops use WASM SIMD
// intrinsics 16 bytes at a time (clang's own vectorisation of plain loops widened every weight to 32 bits and
// shuffled: 7× slower). No libc: the module imports nothing and owns one memory that the
// encoder grows to fit a batch of rows.
#include <stdint.h>
#include <wasm_simd128.h>

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

/** One filtered byte: x (the byte), a (left), b (above), c (above left), for filter f. */
static inline u8 filter_byte(int f, u8 x, u8 a, u8 b, u8 c) {
  switch (f) {
  case 0: return x;
  case 1: return (u8)(x - a);
  case 2: return (u8)(x - b);
  case 3: return (u8)(x - (u8)(((uint16_t)a + b) >> 1));
  default: return (u8)(x - paeth(a, b, c));
  }
}

/** The bytes' weights, min(v, 256 - v): the signed byte's magnitude (128 stays 128). */
static inline v128_t weights(v128_t v) { return wasm_u8x16_min(v, wasm_i8x16_neg(v)); }

/** floor((a + b) / 2) per byte (avgr rounds up). */
static inline v128_t average_floor(v128_t a, v128_t b) {
  return wasm_i8x16_sub(wasm_u8x16_avgr(a, b), wasm_v128_and(wasm_v128_xor(a, b), wasm_i8x16_splat(1)));
}

/** paeth() on 8 lanes of 16 bits. */
static inline v128_t paeth8(v128_t a, v128_t b, v128_t c) {
  v128_t bc = wasm_i16x8_sub(b, c), ac = wasm_i16x8_sub(a, c);
  v128_t pa = wasm_i16x8_abs(bc), pb = wasm_i16x8_abs(ac), pc = wasm_i16x8_abs(wasm_i16x8_add(bc, ac));
  v128_t take_a = wasm_v128_and(wasm_i16x8_le(pa, pb), wasm_i16x8_le(pa, pc));
  return wasm_v128_bitselect(a, wasm_v128_bitselect(b, c, wasm_i16x8_le(pb, pc)), take_a);
}

/** The Paeth predictors of 16 bytes. */
static inline v128_t paeth16(v128_t a, v128_t b, v128_t c) {
  v128_t low = paeth8(wasm_u16x8_extend_low_u8x16(a), wasm_u16x8_extend_low_u8x16(b), wasm_u16x8_extend_low_u8x16(c));
  v128_t high = paeth8(wasm_u16x8_extend_high_u8x16(a), wasm_u16x8_extend_high_u8x16(b), wasm_u16x8_extend_high_u8x16(c));
  return wasm_u8x16_narrow_i16x8(low, high);
}

/** The 16 bytes filtered with filter f (x the bytes, a left, b above, c above left). */
static inline v128_t filter16(int f, v128_t x, v128_t a, v128_t b, v128_t c) {
  switch (f) {
  case 0: return x;
  case 1: return wasm_i8x16_sub(x, a);
  case 2: return wasm_i8x16_sub(x, b);
  case 3: return wasm_i8x16_sub(x, average_floor(a, b));
  default: return wasm_i8x16_sub(x, paeth16(a, b, c));
  }
}

/** Adds the five filters' weights of a row into sums[0..4]; prev is a row of zeros above the image's first. */
static void filter_sums(const u8 *row, const u8 *prev, int n, int bpp, uint32_t sums[5]) {
  int i = 0;
  for (; i < bpp && i < n; i++)
    for (int f = 0; f < 5; f++) sums[f] += weight(filter_byte(f, row[i], 0, prev[i], 0));
  // Weights summed in 16-bit lanes (at most 2 × 128 a lane per step), moved to 32-bit lanes every 128 steps.
  v128_t total[5];
  for (int f = 0; f < 5; f++) total[f] = wasm_i32x4_splat(0);
  while (i + 16 <= n) {
    v128_t lane[5];
    for (int f = 0; f < 5; f++) lane[f] = wasm_i16x8_splat(0);
    for (int steps = 0; steps < 128 && i + 16 <= n; steps++, i += 16) {
      v128_t x = wasm_v128_load(row + i), a = wasm_v128_load(row + i - bpp);
      v128_t b = wasm_v128_load(prev + i), c = wasm_v128_load(prev + i - bpp);
      for (int f = 0; f < 5; f++) lane[f] = wasm_i16x8_add(lane[f], wasm_u16x8_extadd_pairwise_u8x16(weights(filter16(f, x, a, b, c))));
    }
    for (int f = 0; f < 5; f++) total[f] = wasm_i32x4_add(total[f], wasm_u32x4_extadd_pairwise_u16x8(lane[f]));
  }
  for (int f = 0; f < 5; f++)
    sums[f] += wasm_u32x4_extract_lane(total[f], 0) + wasm_u32x4_extract_lane(total[f], 1) + wasm_u32x4_extract_lane(total[f], 2) +
               wasm_u32x4_extract_lane(total[f], 3);
  for (; i < n; i++)
    for (int f = 0; f < 5; f++) sums[f] += weight(filter_byte(f, row[i], row[i - bpp], prev[i], prev[i - bpp]));
}

/** Writes the row filtered with filter f into out. */
static void filter_into(int f, const u8 *row, const u8 *prev, int n, int bpp, u8 *out) {
  int i = 0;
  for (; i < bpp && i < n; i++) out[i] = filter_byte(f, row[i], 0, prev[i], 0);
  for (; i + 16 <= n; i += 16) {
    v128_t x = wasm_v128_load(row + i), a = wasm_v128_load(row + i - bpp);
    v128_t b = wasm_v128_load(prev + i), c = wasm_v128_load(prev + i - bpp);
    wasm_v128_store(out + i, filter16(f, x, a, b, c));
  }
  for (; i < n; i++) out[i] = filter_byte(f, row[i], row[i - bpp], prev[i], prev[i - bpp]);
}

/**
 * Filters `rows` rows of `stride` bytes at `input` into `output` (each row its filter byte, then `stride` bytes).
 * The row before the first is at `input - stride` when `has_previous`, else taken as zeros (the image's first
 * row: there Up equals None and Paeth equals Sub, and ties go to the lower filter number, so the choice is
 * libpng's, which skips those two). `scratch` holds stride bytes (the zero row). The five filters' weights are
 * summed in one pass over the row, 16 bytes at a time; only the chosen filter is then written.
 */
__attribute__((export_name("filter_rows")))
void filter_rows(const u8 *input, int stride, int rows, int bpp, int has_previous, u8 *scratch, u8 *output) {
  for (int r = 0; r < rows; r++) {
    const u8 *row = input + (long)r * stride;
    const u8 *prev = (r > 0 || has_previous) ? row - stride : 0;
    if (!prev) {
      __builtin_memset(scratch, 0, stride);
      prev = scratch;
    }
    u8 *out = output + (long)r * (stride + 1);
    uint32_t sums[5] = {0, 0, 0, 0, 0};
    filter_sums(row, prev, stride, bpp, sums);
    int best = 0;
    for (int f = 1; f < 5; f++)
      if (sums[f] < sums[best]) best = f;
    out[0] = (u8)best;
    filter_into(best, row, prev, stride, bpp, out + 1);
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
