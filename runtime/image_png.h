// image_png.h — `./flux --png FILE`: an image output [1, C, H, W] (C = 3:
// RGB, C = 1: gray) written as an 8-bit PNG through libpng, pixels as BFL's
// sampling code makes them: x clamped to [-1, 1], then 127.5 (x + 1)
// truncated to a byte (torch's .byte()). Built when the Makefile finds
// libpng (pkg-config libpng), which defines FLUX_PNG; otherwise --png says so.
#ifndef IMAGE_PNG_H
#define IMAGE_PNG_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// in float32, as torch's tensor ops on the decoder's float output
static inline unsigned char png_pixel(double v) {
  float x = (float)v;
  if (!(x >= -1.0f)) x = -1.0f;  // NaN too: a visible black, and said by the caller's stats
  if (x > 1.0f) x = 1.0f;
  return (unsigned char)(127.5f * (x + 1.0f));
}

#ifdef FLUX_PNG
#include <png.h>
#include <string.h>

typedef struct {
  unsigned char *data;
  size_t len, cap;
} PngBytes;

static void png_bytes_put(png_structp png, png_bytep p, png_size_t n) {
  PngBytes *b = png_get_io_ptr(png);
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->len + n) cap *= 2;
    unsigned char *d = realloc(b->data, cap);
    if (!d) png_error(png, "out of memory");
    b->data = d, b->cap = cap;
  }
  memcpy(b->data + b->len, p, n);
  b->len += n;
}
static void png_bytes_flush(png_structp png) { (void)png; }

// load(dt, data, i) is element i of the [1, c, h, w] image (channel-major, as
// the output lies). Encoded in memory, so that the file is written by the one
// output rule (out_write: never a partial file, links and devices as for every
// output). 0 with the bytes in *out (the caller frees them), or -1 with a
// message in err.
static int png_encode_chw(int c, int64_t h, int64_t w, double (*load)(int, const void *, int64_t), int dt, const void *data,
                          PngBytes *out, char *err, size_t errlen) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  unsigned char *row = malloc((size_t)(w * c));
  *out = (PngBytes){0};
  if (!png || !info || !row || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    free(row);
    free(out->data);
    *out = (PngBytes){0};
    return snprintf(err, errlen, "libpng could not encode the image"), -1;
  }
  png_set_write_fn(png, out, png_bytes_put, png_bytes_flush);
  png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, c == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int64_t y = 0; y < h; y++) {
    for (int64_t x = 0; x < w; x++)
      for (int k = 0; k < c; k++) row[x * c + k] = png_pixel(load(dt, data, ((int64_t)k * h + y) * w + x));
    png_write_row(png, row);
  }
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  free(row);
  return 0;
}
#endif

#endif
