/* Two .npy files in one fuzz input, as `mxp train --data` (digits_x.npy,
 * digits_y.npy) and `mxp quant-gemm --a --b` read them: the first file
 * runs up to the second "\x93NUMPY" magic (looked for from byte 1 on), the
 * second is the rest (empty without a second magic).  A seed is the two
 * files one after the other (cat x.npy y.npy).  Used by the fuzz targets
 * and by the ctests that replay their regressions. */
#ifndef MXP_FUZZ_NPY_PAIR_H
#define MXP_FUZZ_NPY_PAIR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The first file's length. */
static inline size_t npy_pair_split(const uint8_t *data, size_t size)
{
    static const uint8_t magic[6] = { 0x93, 'N', 'U', 'M', 'P', 'Y' };
    for (size_t i = 1; i + sizeof magic <= size; i++) {
        if (data[i] == magic[0] && memcmp(data + i, magic, sizeof magic) == 0)
            return i;
    }
    return size;
}

#endif
