/*
 * doca_bitfield.h: byte-order conversion against libc's, masks, field set/get in host-order
 * (U8) and big-endian (BE16/BE32) registers, and use in constant expressions.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <endian.h>

#include "doca_bitfield.h"
#include "t_helpers.h"

/* The helpers must fold to constants: these initialise static data. */
static const uint16_t k_ethertype_be = DOCA_HTOBE16(0x0800);
static const uint32_t k_mask_be = DOCA_BE32_GENMASK(23, 4);
static const uint8_t k_nibble = DOCA_U8_GENMASK(7, 4);

/* Values the compiler cannot see, so the run-time path is exercised as well. */
static volatile uint16_t v16 = 0x1234;
static volatile uint32_t v32 = 0x12345678u;
static volatile uint64_t v64 = 0x0102030405060708ull;

static void test_byte_order(void)
{
	T_EQ_INT(DOCA_HTOBE16(v16), htons(v16));
	T_EQ_INT(DOCA_HTOBE32(v32), htonl(v32));
	T_EQ_INT(DOCA_HTOBE64(v64), htobe64(v64));
	T_EQ_INT(DOCA_BETOH16(htons(v16)), v16);
	T_EQ_INT(DOCA_BETOH32(htonl(v32)), v32);
	T_EQ_INT(DOCA_BETOH64(htobe64(v64)), v64);
	/* Round trips and the width of the result. */
	T_EQ_INT(DOCA_BETOH32(DOCA_HTOBE32(0xdeadbeefu)), 0xdeadbeefu);
	T_EQ_INT(sizeof(DOCA_HTOBE16(1)), 2);
	T_EQ_INT(sizeof(DOCA_HTOBE32(1)), 4);
	T_EQ_INT(sizeof(DOCA_HTOBE64(1)), 8);
	/* The bytes in memory are in network order. */
	uint32_t be = DOCA_HTOBE32(0x0a000001u);
	const uint8_t *b = (const uint8_t *)&be;
	T_TRUE(b[0] == 0x0a && b[1] == 0 && b[2] == 0 && b[3] == 1);
	T_EQ_INT(k_ethertype_be, htons(0x0800));
}

static void test_shift_and_masks(void)
{
	T_EQ_INT(DOCA_SHIFT(0), 0);
	T_EQ_INT(DOCA_SHIFT(1), 0);
	T_EQ_INT(DOCA_SHIFT(0x80), 7);
	T_EQ_INT(DOCA_SHIFT(0xf0), 4);
	T_EQ_INT(DOCA_SHIFT(0x8000000000000000ull), 63);

	T_EQ_INT(k_nibble, 0xf0);
	T_EQ_INT(DOCA_U8_GENMASK(0, 0), 0x01);
	T_EQ_INT(DOCA_U8_GENMASK(7, 0), 0xff);
	T_EQ_INT(DOCA_U8_GENMASK(5, 2), 0x3c);
	T_EQ_INT(DOCA_BE16_GENMASK(11, 4), htons(0x0ff0));
	T_EQ_INT(DOCA_BE16_GENMASK(15, 0), 0xffff);
	T_EQ_INT(DOCA_BE16_GENMASK(15, 15), htons(0x8000));
	T_EQ_INT(k_mask_be, htonl(0x00fffff0u));
	T_EQ_INT(DOCA_BE32_GENMASK(31, 0), 0xffffffffu);
	T_EQ_INT(DOCA_BE32_GENMASK(0, 0), htonl(1));

	uint8_t m8 = 0;
	doca_be16_t m16 = 0;
	doca_be32_t m32 = 0;
	DOCA_U8P_GENMASK(3, 1, &m8);
	DOCA_BE16P_GENMASK(12, 8, &m16);
	DOCA_BE32P_GENMASK(31, 24, &m32);
	T_EQ_INT(m8, 0x0e);
	T_EQ_INT(m16, htons(0x1f00));
	T_EQ_INT(m32, htonl(0xff000000u));
}

static void test_set_get(void)
{
	/* An IPv4-style first byte: version in bits 7..4, header length in bits 3..0. */
	const uint8_t ver = DOCA_U8_GENMASK(7, 4), ihl = DOCA_U8_GENMASK(3, 0);
	uint8_t vihl = DOCA_U8_SET(ver, 4) | DOCA_U8_SET(ihl, 5);
	T_EQ_INT(vihl, 0x45);
	T_EQ_INT(DOCA_U8_GET(ver, vihl), 4);
	T_EQ_INT(DOCA_U8_GET(ihl, vihl), 5);
	/* Values wider than the field are cut to the field. */
	T_EQ_INT(DOCA_U8_SET(ihl, 0x1f), 0x0f);

	/* A 16-bit big-endian register: flags in 15..13, fragment offset in 12..0. */
	const doca_be16_t flags = DOCA_BE16_GENMASK(15, 13), frag = DOCA_BE16_GENMASK(12, 0);
	doca_be16_t ff = DOCA_BE16_SET(flags, 2) | DOCA_BE16_SET(frag, 0x123);
	T_EQ_INT(ff, htons(0x4123));
	T_EQ_INT(DOCA_BE16_GET(flags, ff), 2);
	T_EQ_INT(DOCA_BE16_GET(frag, ff), 0x123);

	/* A 32-bit big-endian register with a field in the middle. */
	const doca_be32_t mid = DOCA_BE32_GENMASK(19, 8);
	doca_be32_t r32 = DOCA_BE32_SET(mid, 0xabc);
	T_EQ_INT(r32, htonl(0x000abc00u));
	T_EQ_INT(DOCA_BE32_GET(mid, r32 | htonl(0xff0000ffu)), 0xabc);

	/* The pointer forms OR into what is there. */
	uint8_t reg8 = 0x01;
	DOCA_U8P_SET(ver, 6, &reg8);
	T_EQ_INT(reg8, 0x61);
	doca_be16_t reg16 = htons(0x0001);
	DOCA_BE16P_SET(flags, 7, &reg16);
	T_EQ_INT(reg16, htons(0xe001));
	doca_be32_t reg32 = 0;
	DOCA_BE32P_SET(mid, 0xfff, &reg32);
	DOCA_BE32P_SET(DOCA_BE32_GENMASK(31, 28), 0x9, &reg32);
	T_EQ_INT(reg32, htonl(0x900fff00u));
}

int main(void)
{
	test_byte_order();
	test_shift_and_masks();
	test_set_get();
	T_DONE();
}
