/* Helpers for the .npy tests: hand-built files and expected failures. */
#ifndef MXP_TESTS_NPY_UTIL_H
#define MXP_TESTS_NPY_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "mxp.h"

/* Writes a .npy image into buf: magic, version major.0, the header length
 * (2 bytes for 1.0, else 4), header exactly as given (no padding), then n
 * bytes of data.  Returns its size; fails the test if cap is too small. */
size_t npy_build(unsigned char *buf, size_t cap, int major, const char *header, const void *data, size_t n);

/* Loads a hand-built image that must fail with st and leave the output
 * NULL; returns mxp_last_error() for checking the message. */
const char *npy_expect_error(mxp_status st, int major, const char *header, const void *data, size_t n);

/* Loads a hand-built image that must succeed; the caller frees the array. */
mxp_array *npy_expect_ok(int major, const char *header, const void *data, size_t n);

/* Empties directory dir (regular entries only) and creates it if missing:
 * a fresh directory for each test of the atomic-save suites. */
void npy_fresh_dir(const char *dir);

/* How many entries dir holds; *temp_seen: whether a name starts with
 * temp_prefix (a save's temporary file, ".x.npy."). */
int npy_count_entries(const char *dir, const char *temp_prefix, bool *temp_seen);

/* Fails the test unless `text` contains `part`. */
void npy_assert_contains(const char *text, const char *part);

#endif
