/*
 * Host memory for UROM workers, the host side:
 *  - the memh descriptor (src/urom/proto/sdp_urom_memh.c): round trip, every bound, every cut,
 *    bad magic, another version, trailing bytes, unknown flags, wrapping ranges;
 *  - the export engine (include/softdpu/urom_mem.h): argument errors, what memh and mkey
 *    carry, the engine's lifetime (its progress thread exists exactly while something is
 *    exported), exports from several threads, sdp_urom_domain_export_buffer().
 * test_urom_mem_plugin.c tests the worker-side helper against this engine in one process;
 * tests/integration/test_urom_mem.c runs the worker side in another process.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doca_urom.h"
#include "sdp_urom_memh.h"
#include "softdpu/urom_mem.h"
#include "t_helpers.h"
#include "t_log_capture.h"

/* ---- memh descriptor ---- */

static uint8_t addr_bytes[SDP_UROM_MEMH_ADDR_MAX + 1];
static uint8_t rkey_bytes[SDP_UROM_MEMH_RKEY_MAX + 1];
static uint8_t packed[SDP_UROM_MEMH_MAX_LEN + 64];

static struct sdp_urom_memh valid_memh(void)
{
	struct sdp_urom_memh m;

	memset(&m, 0, sizeof(m));
	m.flags = SDP_UROM_MEMH_FLAG_OWNER_PROGRESS;
	m.va = 0x7f0012345000ull;
	m.len = 4096;
	m.owner_addr = addr_bytes;
	m.owner_addr_len = 77;
	m.rkey = rkey_bytes;
	m.rkey_len = 12;
	return m;
}

static void test_memh_roundtrip(void)
{
	struct sdp_urom_memh m = valid_memh(), out;
	size_t len = 0, i;
	char why[128];

	for (i = 0; i < sizeof(addr_bytes); i++)
		addr_bytes[i] = (uint8_t)(i * 7 + 1);
	for (i = 0; i < sizeof(rkey_bytes); i++)
		rkey_bytes[i] = (uint8_t)(i * 13 + 5);

	T_EQ_INT(sdp_urom_memh_packed_size(&m), SDP_UROM_MEMH_HDR_LEN + 77 + 12);
	T_OK(sdp_urom_memh_pack(&m, packed, sizeof(packed), &len));
	T_EQ_INT(len, SDP_UROM_MEMH_HDR_LEN + 77 + 12);
	T_TRUE(memcmp(packed, "SDMH", 4) == 0);
	/* Little-endian on the wire, whatever the host. */
	T_EQ_INT(packed[4], 1);
	T_EQ_INT(packed[5], 0);
	T_EQ_INT(packed[8], 0x00);
	T_EQ_INT(packed[9], 0x50);
	T_EQ_INT(packed[10], 0x34);
	T_EQ_INT(packed[24], 77);

	memset(&out, 0xa5, sizeof(out));
	T_OK(sdp_urom_memh_unpack_why(packed, len, &out, why, sizeof(why)));
	T_EQ_INT(out.version, SDP_UROM_MEMH_VERSION);
	T_EQ_INT(out.flags, SDP_UROM_MEMH_FLAG_OWNER_PROGRESS);
	T_EQ_INT(out.va, m.va);
	T_EQ_INT(out.len, m.len);
	T_EQ_INT(out.owner_addr_len, 77);
	T_EQ_INT(out.rkey_len, 12);
	/* Views into the buffer, not copies. */
	T_TRUE(out.owner_addr == packed + SDP_UROM_MEMH_HDR_LEN);
	T_TRUE(out.rkey == packed + SDP_UROM_MEMH_HDR_LEN + 77);
	T_TRUE(memcmp(out.owner_addr, addr_bytes, 77) == 0);
	T_TRUE(memcmp(out.rkey, rkey_bytes, 12) == 0);

	/* The largest memh and the widest range. */
	m.owner_addr_len = SDP_UROM_MEMH_ADDR_MAX;
	m.rkey_len = SDP_UROM_MEMH_RKEY_MAX;
	m.va = 1;
	m.len = UINT64_MAX - 1;
	T_OK(sdp_urom_memh_pack(&m, packed, sizeof(packed), &len));
	T_EQ_INT(len, SDP_UROM_MEMH_MAX_LEN - SDP_UROM_MEMH_AM_KEY_LEN);
	T_OK(sdp_urom_memh_unpack(packed, len, &out));
	T_EQ_INT(out.len, UINT64_MAX - 1);
	T_TRUE(memcmp(out.rkey, rkey_bytes, SDP_UROM_MEMH_RKEY_MAX) == 0);
	T_EQ_INT(out.am_key, 0);

	/* With the am_key trailer: the largest memh there is; cut or padded by one, refused. */
	m.flags |= SDP_UROM_MEMH_FLAG_AM_KEY;
	m.am_key = 0x0123456789abcdefull;
	T_EQ_INT(sdp_urom_memh_packed_size(&m), SDP_UROM_MEMH_MAX_LEN);
	T_OK(sdp_urom_memh_pack(&m, packed, sizeof(packed), &len));
	T_EQ_INT(len, SDP_UROM_MEMH_MAX_LEN);
	T_OK(sdp_urom_memh_unpack(packed, len, &out));
	T_EQ_INT(out.am_key, 0x0123456789abcdefull);
	T_EQ_INT(out.flags, m.flags);
	T_STATUS(sdp_urom_memh_unpack(packed, len - 1, &out), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_memh_unpack(packed, len + 1, &out), DOCA_ERROR_INVALID_VALUE);
	/* The same bytes without the flag: eight bytes too many. */
	packed[6] &= (uint8_t)~SDP_UROM_MEMH_FLAG_AM_KEY;
	T_STATUS(sdp_urom_memh_unpack(packed, len, &out), DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_urom_memh_unpack(packed, len - SDP_UROM_MEMH_AM_KEY_LEN, &out));
	m.flags &= (uint16_t)~SDP_UROM_MEMH_FLAG_AM_KEY;
}

static void test_memh_pack_errors(void)
{
	struct sdp_urom_memh m = valid_memh();
	size_t len = 12345;

	T_STATUS(sdp_urom_memh_pack(NULL, packed, sizeof(packed), &len), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_memh_pack(&m, packed, sizeof(packed), NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_memh_pack(&m, NULL, 10, &len), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(len, 12345);
	/* Too small: the size needed, nothing written past cap. */
	memset(packed, 0xee, sizeof(packed));
	T_STATUS(sdp_urom_memh_pack(&m, packed, 50, &len), DOCA_ERROR_TOO_BIG);
	T_EQ_INT(len, SDP_UROM_MEMH_HDR_LEN + 77 + 12);
	T_EQ_INT(packed[0], 0xee);
	T_STATUS(sdp_urom_memh_pack(&m, NULL, 0, &len), DOCA_ERROR_TOO_BIG);
	T_EQ_INT(len, SDP_UROM_MEMH_HDR_LEN + 77 + 12);

	m = valid_memh();
	m.len = 0;
	T_STATUS(sdp_urom_memh_pack(&m, packed, sizeof(packed), &len), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(sdp_urom_memh_packed_size(&m), 0);
	m = valid_memh();
	m.va = UINT64_MAX - 10;
	m.len = 11; /* va + len = 2^64: wraps */
	T_STATUS(sdp_urom_memh_pack(&m, packed, sizeof(packed), &len), DOCA_ERROR_INVALID_VALUE);
	m.len = 10; /* va + len = 2^64 - 1: the widest range that does not wrap */
	T_OK(sdp_urom_memh_pack(&m, packed, sizeof(packed), &len));
	m = valid_memh();
	m.flags = 0x8000;
	T_STATUS(sdp_urom_memh_pack(&m, packed, sizeof(packed), &len), DOCA_ERROR_INVALID_VALUE);
	m = valid_memh();
	m.owner_addr_len = 0;
	T_STATUS(sdp_urom_memh_pack(&m, packed, sizeof(packed), &len), DOCA_ERROR_INVALID_VALUE);
	m.owner_addr_len = SDP_UROM_MEMH_ADDR_MAX + 1;
	T_STATUS(sdp_urom_memh_pack(&m, packed, sizeof(packed), &len), DOCA_ERROR_INVALID_VALUE);
	m = valid_memh();
	m.owner_addr = NULL;
	T_STATUS(sdp_urom_memh_pack(&m, packed, sizeof(packed), &len), DOCA_ERROR_INVALID_VALUE);
	m = valid_memh();
	m.rkey_len = SDP_UROM_MEMH_RKEY_MAX + 1;
	T_STATUS(sdp_urom_memh_pack(&m, packed, sizeof(packed), &len), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(sdp_urom_memh_packed_size(&m), 0);
	m = valid_memh();
	m.rkey = NULL;
	T_STATUS(sdp_urom_memh_pack(&m, packed, sizeof(packed), &len), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(sdp_urom_memh_packed_size(NULL), 0);
}

/* Unpack a copy of exactly len bytes (so ASan sees any overread); the status. */
static doca_error_t unpack_exact(const uint8_t *src, size_t len, struct sdp_urom_memh *m, char *why,
				 size_t why_size)
{
	uint8_t *copy = malloc(len > 0 ? len : 1);
	doca_error_t status;

	memcpy(copy, src, len);
	status = sdp_urom_memh_unpack_why(copy, len, m, why, why_size);
	free(copy);
	return status;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void test_memh_unpack_errors(void)
{
	struct sdp_urom_memh m = valid_memh(), out, untouched;
	uint8_t good[SDP_UROM_MEMH_HDR_LEN + 77 + 12], bad[sizeof(good) + 1];
	size_t len, cut;
	char why[128];

	T_OK(sdp_urom_memh_pack(&m, good, sizeof(good), &len));
	T_STATUS(sdp_urom_memh_unpack(NULL, len, &out), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_memh_unpack(good, len, NULL), DOCA_ERROR_INVALID_VALUE);

	/* Every cut is refused, out untouched, and a reason written. */
	memset(&untouched, 0x5a, sizeof(untouched));
	for (cut = 0; cut < len; cut++) {
		out = untouched;
		why[0] = '\0';
		T_STATUS(unpack_exact(good, cut, &out, why, sizeof(why)), DOCA_ERROR_INVALID_VALUE);
		T_TRUE(memcmp(&out, &untouched, sizeof(out)) == 0);
		T_TRUE(why[0] != '\0');
	}
	/* A trailing byte. */
	memcpy(bad, good, len);
	bad[len] = 0;
	T_STATUS(unpack_exact(bad, len + 1, &out, why, sizeof(why)), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(strstr(why, "follow") != NULL);
	/* Bad magic. */
	memcpy(bad, good, len);
	bad[0] = 'X';
	T_STATUS(unpack_exact(bad, len, &out, why, sizeof(why)), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(strstr(why, "magic") != NULL);
	/* Another version: NOT_SUPPORTED with the version, even with a short body. */
	memcpy(bad, good, len);
	bad[4] = 2;
	out = untouched;
	T_STATUS(unpack_exact(bad, 6, &out, why, sizeof(why)), DOCA_ERROR_NOT_SUPPORTED);
	T_EQ_INT(out.version, 2);
	T_TRUE(strstr(why, "version 2") != NULL);
	/* Unknown flags. */
	memcpy(bad, good, len);
	bad[7] = 0x80;
	T_STATUS(unpack_exact(bad, len, &out, why, sizeof(why)), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(strstr(why, "flags") != NULL);
	/* len 0, and a range that wraps. */
	memcpy(bad, good, len);
	memset(bad + 16, 0, 8);
	T_STATUS(unpack_exact(bad, len, &out, why, sizeof(why)), DOCA_ERROR_INVALID_VALUE);
	memcpy(bad, good, len);
	memset(bad + 8, 0xff, 8);
	T_STATUS(unpack_exact(bad, len, &out, why, sizeof(why)), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(strstr(why, "wraps") != NULL);
	/* Lengths: 0, above the bound, 2^32 - 1 (no overflow of the sum), off by one. */
	memcpy(bad, good, len);
	put_u32(bad + 24, 0);
	T_STATUS(unpack_exact(bad, len, &out, why, sizeof(why)), DOCA_ERROR_INVALID_VALUE);
	put_u32(bad + 24, SDP_UROM_MEMH_ADDR_MAX + 1);
	T_STATUS(unpack_exact(bad, len, &out, why, sizeof(why)), DOCA_ERROR_INVALID_VALUE);
	put_u32(bad + 24, UINT32_MAX);
	T_STATUS(unpack_exact(bad, len, &out, why, sizeof(why)), DOCA_ERROR_INVALID_VALUE);
	put_u32(bad + 24, 78);
	T_STATUS(unpack_exact(bad, len, &out, why, sizeof(why)), DOCA_ERROR_INVALID_VALUE);
	put_u32(bad + 24, 77);
	put_u32(bad + 28, 0);
	T_STATUS(unpack_exact(bad, len, &out, why, sizeof(why)), DOCA_ERROR_INVALID_VALUE);
	put_u32(bad + 28, UINT32_MAX);
	T_STATUS(unpack_exact(bad, len, &out, why, sizeof(why)), DOCA_ERROR_INVALID_VALUE);
	put_u32(bad + 28, 11);
	T_STATUS(unpack_exact(bad, len, &out, why, sizeof(why)), DOCA_ERROR_INVALID_VALUE);
	/* A tiny why buffer is still terminated; NULL why is fine. */
	T_STATUS(unpack_exact(bad, len, &out, why, 4), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(strlen(why), 3);
	T_STATUS(unpack_exact(bad, len, &out, NULL, 0), DOCA_ERROR_INVALID_VALUE);
}

/* ---- export engine ---- */

/* Threads of this process named like the export engine's progress thread. */
static int thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	char path[300], comm[64];
	struct dirent *e;
	FILE *f;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) != NULL &&
		    strncmp(comm, "sdp-urom-export", 15) == 0)
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

static void test_export_errors(void)
{
	struct sdp_urom_mem *mem = (struct sdp_urom_mem *)0x1;
	const void *p = NULL;
	char buf[64];
	size_t len = 0;

	t_log_reset();
	T_STATUS(sdp_urom_mem_export(NULL, 64, &mem), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_mem_export(buf, 0, &mem), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_mem_export(buf, sizeof(buf), NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_mem_export((void *)(UINTPTR_MAX - 8), 64, &mem),
		 DOCA_ERROR_INVALID_VALUE);
	T_TRUE(mem == (struct sdp_urom_mem *)0x1);
	/* One record per refusal. */
	T_EQ_INT(t_log_nb, 4);
	T_STATUS(sdp_urom_mem_get_memh(NULL, &p, &len), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_mem_get_mkey(NULL, &p, &len), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_mem_unexport(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_domain_export_buffer(NULL, buf, sizeof(buf), &mem),
		 DOCA_ERROR_INVALID_VALUE);
	T_TRUE(p == NULL && len == 0);
}

static void test_export_lifetime(void)
{
	static char a[8192], b[100];
	struct sdp_urom_mem *ma = NULL, *mb = NULL;
	const void *memh_a, *memh_b, *mkey_a;
	size_t memh_a_len, memh_b_len, mkey_a_len;
	struct sdp_urom_memh da, db;
	int base = thread_count();

	T_EQ_INT(base, 0);
	T_OK(sdp_urom_mem_export(a, sizeof(a), &ma));
	T_EQ_INT(thread_count(), base + 1); /* the progress thread */
	T_OK(sdp_urom_mem_export(b, sizeof(b), &mb));
	T_EQ_INT(thread_count(), base + 1); /* one engine for the process */
	if (ma == NULL || mb == NULL)
		return;

	T_OK(sdp_urom_mem_get_memh(ma, &memh_a, &memh_a_len));
	T_OK(sdp_urom_mem_get_mkey(ma, &mkey_a, &mkey_a_len));
	T_OK(sdp_urom_mem_get_memh(mb, &memh_b, &memh_b_len));
	T_STATUS(sdp_urom_mem_get_memh(ma, NULL, &memh_a_len), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_mem_get_mkey(ma, &mkey_a, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_urom_memh_unpack(memh_a, memh_a_len, &da));
	T_OK(sdp_urom_memh_unpack(memh_b, memh_b_len, &db));
	T_EQ_INT(da.va, (uintptr_t)a);
	T_EQ_INT(da.len, sizeof(a));
	T_EQ_INT(db.va, (uintptr_t)b);
	T_EQ_INT(db.len, sizeof(b));
	/* Progressed by the owner, and with a secret key for the xrma path, one per region. */
	T_EQ_INT(da.flags, SDP_UROM_MEMH_FLAG_OWNER_PROGRESS | SDP_UROM_MEMH_FLAG_AM_KEY);
	T_TRUE(da.am_key != 0 && db.am_key != 0 && da.am_key != db.am_key);
	/* The mkey is the packed rkey inside the memh. */
	T_EQ_INT(da.rkey_len, mkey_a_len);
	T_TRUE(memcmp(da.rkey, mkey_a, mkey_a_len) == 0);
	/* Same owner (the engine's worker) for both. */
	T_EQ_INT(da.owner_addr_len, db.owner_addr_len);
	T_TRUE(memcmp(da.owner_addr, db.owner_addr, da.owner_addr_len) == 0);

	T_OK(sdp_urom_mem_unexport(ma));
	T_EQ_INT(thread_count(), base + 1);
	T_OK(sdp_urom_mem_unexport(mb));
	T_EQ_INT(thread_count(), base); /* the last one stops the engine */

	/* And it starts again. */
	T_OK(sdp_urom_mem_export(a, 1, &ma));
	T_EQ_INT(thread_count(), base + 1);
	T_OK(sdp_urom_mem_unexport(ma));
	T_EQ_INT(thread_count(), base);
}

#define T_EXPORT_THREADS 4
#define T_EXPORT_ROUNDS 40

static void *export_loop(void *arg)
{
	char *buf = arg;
	struct sdp_urom_mem *mem[3];
	struct sdp_urom_memh d;
	const void *memh;
	size_t len;
	int i, j, bad = 0;

	for (i = 0; i < T_EXPORT_ROUNDS; i++) {
		for (j = 0; j < 3; j++)
			bad += sdp_urom_mem_export(buf + j * 64, 64, &mem[j]) != DOCA_SUCCESS;
		for (j = 0; j < 3 && !bad; j++) {
			bad += sdp_urom_mem_get_memh(mem[j], &memh, &len) != DOCA_SUCCESS;
			bad += sdp_urom_memh_unpack(memh, len, &d) != DOCA_SUCCESS ||
			       d.va != (uintptr_t)(buf + j * 64);
		}
		for (j = 2; j >= 0 && !bad; j--)
			bad += sdp_urom_mem_unexport(mem[j]) != DOCA_SUCCESS;
		if (bad)
			break;
	}
	return (void *)(intptr_t)bad;
}

static void test_export_threads(void)
{
	static char bufs[T_EXPORT_THREADS][3 * 64];
	pthread_t th[T_EXPORT_THREADS];
	int base = thread_count(), i;
	void *ret;

	for (i = 0; i < T_EXPORT_THREADS; i++)
		T_EQ_INT(pthread_create(&th[i], NULL, export_loop, bufs[i]), 0);
	for (i = 0; i < T_EXPORT_THREADS; i++) {
		T_EQ_INT(pthread_join(th[i], &ret), 0);
		T_EQ_INT((intptr_t)ret, 0);
	}
	T_EQ_INT(thread_count(), base);
}

static void test_domain_export(void)
{
	static char buf[4096];
	struct doca_urom_domain *domain = NULL;
	struct sdp_urom_mem *mem = NULL, *mem2 = NULL;
	int base = thread_count();

	T_OK(doca_urom_domain_create(&domain));
	if (domain == NULL)
		return;
	T_STATUS(sdp_urom_domain_export_buffer(domain, NULL, 1, &mem), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_domain_export_buffer(domain, buf, 0, &mem), DOCA_ERROR_INVALID_VALUE);
	/* The domain refuses (no buffer count yet): nothing stays exported. */
	T_STATUS(sdp_urom_domain_export_buffer(domain, buf, sizeof(buf), &mem),
		 DOCA_ERROR_BAD_STATE);
	T_TRUE(mem == NULL);
	T_EQ_INT(thread_count(), base);
	T_OK(doca_urom_domain_set_buffers_count(domain, 1));
	T_OK(sdp_urom_domain_export_buffer(domain, buf, sizeof(buf), &mem));
	T_TRUE(mem != NULL);
	T_STATUS(sdp_urom_domain_export_buffer(domain, buf, 16, &mem2), DOCA_ERROR_FULL);
	T_TRUE(mem2 == NULL);
	T_EQ_INT(thread_count(), base + 1);
	T_OK(doca_urom_domain_destroy(domain));
	if (mem != NULL)
		T_OK(sdp_urom_mem_unexport(mem));
	T_EQ_INT(thread_count(), base);
}

int main(void)
{
	t_log_capture();
	test_memh_roundtrip();
	test_memh_pack_errors();
	test_memh_unpack_errors();
	test_export_errors();
	test_export_lifetime();
	test_export_threads();
	test_domain_export();
	T_DONE();
}
