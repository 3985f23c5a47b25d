/*
 * softdpu: byte-order conversion and bit-field helpers for DOCA's big-endian types.
 *
 * Masks passed to the *_SET and *_GET helpers are "shifted masks": the field's bits set in
 * place, in the representation of the register (host order for U8, big-endian for BE16/BE32).
 * Values are always in host order. Every helper is a macro that folds to a constant expression
 * when its arguments are constants, so the results may initialise static data.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_BITFIELD_H_
#define DOCA_BITFIELD_H_

/* DOCA programs get htons()/htonl() and the doca_be*_t types through this header. */
#include <arpa/inet.h>
#include <stdint.h>

#include "doca_types.h"

/* Index of the lowest set bit of _x; 0 when _x is 0. */
#define DOCA_SHIFT(_x) ((_x) ? __builtin_ctzll((unsigned long long)(_x)) : 0)

/* Host order <-> big endian. A swap is its own inverse, so BETOH is HTOBE. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define DOCA_HTOBE16(_x) ((uint16_t)(_x))
#define DOCA_HTOBE32(_x) ((uint32_t)(_x))
#define DOCA_HTOBE64(_x) ((uint64_t)(_x))
#else
#define DOCA_HTOBE16(_x) ((uint16_t)__builtin_bswap16((uint16_t)(_x)))
#define DOCA_HTOBE32(_x) ((uint32_t)__builtin_bswap32((uint32_t)(_x)))
#define DOCA_HTOBE64(_x) ((uint64_t)__builtin_bswap64((uint64_t)(_x)))
#endif
#define DOCA_BETOH16(_x) DOCA_HTOBE16(_x)
#define DOCA_BETOH32(_x) DOCA_HTOBE32(_x)
#define DOCA_BETOH64(_x) DOCA_HTOBE64(_x)

/*
 * Contiguous masks covering bits _l.._h (inclusive, 0 = least significant), e.g.
 * DOCA_U8_GENMASK(7, 4) == 0xf0 and DOCA_BE16_GENMASK(11, 4) == DOCA_HTOBE16(0x0ff0).
 * The *P_ variants store the mask through the pointer _p.
 */
#define DOCA_U8_GENMASK(_h, _l) ((uint8_t)((0xffu >> (7 - (_h))) & (0xffu << (_l))))
#define DOCA_BE16_GENMASK(_h, _l)                                                                  \
	DOCA_HTOBE16((uint16_t)((0xffffu >> (15 - (_h))) & (0xffffu << (_l))))
#define DOCA_BE32_GENMASK(_h, _l)                                                                  \
	DOCA_HTOBE32((uint32_t)((UINT32_C(0xffffffff) >> (31 - (_h))) &                            \
				(UINT32_C(0xffffffff) << (_l))))

#define DOCA_U8P_GENMASK(_h, _l, _p)                                                               \
	do {                                                                                       \
		*(uint8_t *)(_p) = DOCA_U8_GENMASK(_h, _l);                                        \
	} while (0)
#define DOCA_BE16P_GENMASK(_h, _l, _p)                                                             \
	do {                                                                                       \
		*(doca_be16_t *)(_p) = DOCA_BE16_GENMASK(_h, _l);                                  \
	} while (0)
#define DOCA_BE32P_GENMASK(_h, _l, _p)                                                             \
	do {                                                                                       \
		*(doca_be32_t *)(_p) = DOCA_BE32_GENMASK(_h, _l);                                  \
	} while (0)

/*
 * Place the host-order value _v into the field described by the shifted mask _m and return
 * the field in the register's representation (bits outside the field are 0), ready to be
 * OR-ed with the other fields of the register. The value is shifted as an unsigned number, so
 * a field at the top of the register is well defined.
 */
#define DOCA_U8_SET(_m, _v) ((uint8_t)(((unsigned int)(_v) << DOCA_SHIFT(_m)) & (_m)))
#define DOCA_BE16_SET(_m, _v)                                                                      \
	DOCA_HTOBE16((uint16_t)(((unsigned int)(_v) << DOCA_SHIFT(DOCA_BETOH16(_m))) &             \
				DOCA_BETOH16(_m)))
#define DOCA_BE32_SET(_m, _v)                                                                      \
	DOCA_HTOBE32(                                                                              \
		(uint32_t)(((uint32_t)(_v) << DOCA_SHIFT(DOCA_BETOH32(_m))) & DOCA_BETOH32(_m)))

/*
 * OR the field value into the register at _p. As in DOCA, the field's previous bits are not
 * cleared first: use these on a register that starts at zero.
 */
#define DOCA_U8P_SET(_m, _v, _p)                                                                   \
	do {                                                                                       \
		*(uint8_t *)(_p) |= DOCA_U8_SET(_m, _v);                                           \
	} while (0)
#define DOCA_BE16P_SET(_m, _v, _p)                                                                 \
	do {                                                                                       \
		*(doca_be16_t *)(_p) |= DOCA_BE16_SET(_m, _v);                                     \
	} while (0)
#define DOCA_BE32P_SET(_m, _v, _p)                                                                 \
	do {                                                                                       \
		*(doca_be32_t *)(_p) |= DOCA_BE32_SET(_m, _v);                                     \
	} while (0)

/* Extract the field described by _m from the register value _f, as a host-order value. */
#define DOCA_U8_GET(_m, _f) ((uint8_t)(((_m) & (_f)) >> DOCA_SHIFT(_m)))
#define DOCA_BE16_GET(_m, _f)                                                                      \
	((uint16_t)(DOCA_BETOH16((_m) & (_f)) >> DOCA_SHIFT(DOCA_BETOH16(_m))))
#define DOCA_BE32_GET(_m, _f)                                                                      \
	((uint32_t)(DOCA_BETOH32((_m) & (_f)) >> DOCA_SHIFT(DOCA_BETOH32(_m))))

#endif /* DOCA_BITFIELD_H_ */
