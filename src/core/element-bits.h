/* Internal: an element of 1, 2, 4 or 8 bytes as the integer of its bits
 * and back, through memcpy of that width (any alignment, any host byte
 * order): the reference converter's decoding and encoding
 * (src/convert/convert-ref.c) and the sign operations on the bits
 * (src/ops/strided.c). */
#ifndef MXP_CORE_ELEMENT_BITS_H
#define MXP_CORE_ELEMENT_BITS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t mxp_element_bits(const void *p, size_t size)
{
    switch (size) {
    case 1: { uint8_t v; memcpy(&v, p, 1); return v; }
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static inline void mxp_element_set_bits(void *p, size_t size, uint64_t v)
{
    switch (size) {
    case 1: { const uint8_t w = (uint8_t)v; memcpy(p, &w, 1); break; }
    case 2: { const uint16_t w = (uint16_t)v; memcpy(p, &w, 2); break; }
    case 4: { const uint32_t w = (uint32_t)v; memcpy(p, &w, 4); break; }
    default: memcpy(p, &v, 8); break;
    }
}

#endif
