/*
 * softdpu internal: the few helpers every parser of src/urom/proto shares (the UROM messages,
 * the memh descriptor, the out-of-band allgather's frames): little-endian fields at a byte
 * pointer, and the reason text a refused unpack writes for its caller to log.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROM_WIRE_H_
#define SDP_UROM_WIRE_H_

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Store the low n bytes (n <= 8) of v at p, least significant first. */
static inline void sdp_wire_put_le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Read n bytes (n <= 8) at p as a little-endian number. */
static inline uint64_t sdp_wire_get_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i > 0; i--)
		v = (v << 8) | p[i - 1];
	return v;
}

/* The reason of a refusal into why, when the caller asked for one (why may be NULL). */
static inline void __attribute__((format(printf, 3, 4)))
sdp_wire_why(char *why, size_t why_size, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || why_size == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, why_size, fmt, ap);
	va_end(ap);
}

#endif /* SDP_UROM_WIRE_H_ */
