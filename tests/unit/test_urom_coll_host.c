/*
 * worker_coll's shared messages and host half without a service or a worker: the layouts both
 * halves rely on (LP64), the worker-to-worker wire parser, the version check of
 * urom_coll_init, and the argument checks of team creation, the collective starts and the
 * request calls (each refusal returns its status, leaves the caller's output alone and logs
 * its cause once). A real worker context that never started stands in for the worker where
 * arguments are valid: the submission is refused (BAD_STATE) and no team is left behind. The
 * collectives themselves run end to end in the integration test urom_coll.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>

#include "doca_log.h"
#include "doca_pe.h"
#include "doca_urom.h"
#include "t_helpers.h"
#include "t_log_capture.h"
#include "urom_coll.h"
#include "worker_coll.h"
#include "worker_coll_wire.h"

/*
 * The host half logs as an application (DOCA_LOG_*), t_log_capture.h captures the SDK's
 * stream: an application buffer backend of our own for the host half's records.
 */
static char app_rec[4096];
static char app_log[1 << 14];
static size_t app_len;
static int app_nb;

static void app_flush(char *buf)
{
	size_t n = strlen(buf);

	app_nb++;
	if (app_len + n + 1 < sizeof(app_log)) {
		memcpy(app_log + app_len, buf, n);
		app_len += n;
		app_log[app_len++] = '\n';
		app_log[app_len] = '\0';
	}
}

static void app_reset(void)
{
	app_log[0] = '\0';
	app_len = 0;
	app_nb = 0;
}

static void app_capture(void)
{
	struct doca_log_backend *be = NULL;

	T_OK(doca_log_backend_create_with_buf(app_rec, sizeof(app_rec), app_flush, &be));
	if (be != NULL)
		T_OK(doca_log_backend_set_level_lower_limit(be, DOCA_LOG_LEVEL_WARNING));
	app_reset();
}

/* Exactly one record since the last reset, containing cause (and forget it). */
static void logged_once(const char *file, int line, const char *call, const char *cause)
{
	if (app_nb != 1 || strstr(app_log, cause) == NULL) {
		fprintf(stderr, "FAIL %s:%d: %s: expected one record with \"%s\", got %d:\n%s",
			file, line, call, cause, app_nb, app_log);
		t_failures++;
	}
	app_reset();
}

/* call returns want and the host half logs the cause once. */
#define T_REFUSED(call, want, cause)                                                               \
	do {                                                                                       \
		app_reset();                                                                       \
		T_STATUS(call, want);                                                              \
		logged_once(__FILE__, __LINE__, #call, cause);                                     \
	} while (0)

/* call returns want and logs nothing. */
#define T_QUIET(call, want)                                                                        \
	do {                                                                                       \
		app_reset();                                                                       \
		T_STATUS(call, want);                                                              \
		if (app_nb != 0)                                                                   \
			t_fail("%s logged %d records:\n%s", #call, app_nb, app_log);               \
	} while (0)

/* Never dereferenced: only compared, to see that a refusal left the output alone. */
#define TEAM_SENTINEL ((struct urom_coll_team *)(uintptr_t)0x7e57)
#define REQ_SENTINEL ((struct urom_coll_req *)(uintptr_t)0x7e58)

static void done_cb(doca_error_t result, union doca_data cookie)
{
	(void)result;
	(void)cookie;
	t_fail("the callback must not run when submission fails");
}

static void test_layouts(void)
{
	T_EQ_INT(UROM_WORKER_COLL_VERSION, 3);
	T_EQ_INT(UROM_COLL_MAX_MEMBERS, 64);
	T_EQ_INT(UROM_COLL_MAX_TEAMS, 64);
	T_EQ_INT(UROM_COLL_MAX_LEN, 256ull << 20);
	T_EQ_INT(UROM_COLL_FLAG_IN_PLACE, 1);
	T_TRUE(UROM_COLL_IN_PLACE == (const void *)1);

	T_EQ_INT(UROM_WORKER_CMD_COLL_TEAM_CREATE, 0);
	T_EQ_INT(UROM_WORKER_CMD_COLL_TEAM_DESTROY, 1);
	T_EQ_INT(UROM_WORKER_CMD_COLL_BARRIER, 2);
	T_EQ_INT(UROM_WORKER_CMD_COLL_BCAST, 3);
	T_EQ_INT(UROM_WORKER_CMD_COLL_REDUCE, 4);
	T_EQ_INT(UROM_WORKER_CMD_COLL_ALLREDUCE, 5);
	T_EQ_INT(UROM_WORKER_CMD_COLL_ALLGATHER, 6);
	T_EQ_INT(UROM_WORKER_CMD_COLL_ALLTOALL, 7);
	T_EQ_INT(UROM_WORKER_CMD_COLL_ALLTOALLV, 8);
	T_EQ_INT(UROM_WORKER_CMD_COLL_REDUCE_SCATTER, 9);
	T_EQ_INT(UROM_WORKER_CMD_COLL_MAX, 9);

	T_EQ_INT(UROM_COLL_INT8, 0);
	T_EQ_INT(UROM_COLL_INT16, 1);
	T_EQ_INT(UROM_COLL_INT32, 2);
	T_EQ_INT(UROM_COLL_INT64, 3);
	T_EQ_INT(UROM_COLL_UINT8, 4);
	T_EQ_INT(UROM_COLL_UINT16, 5);
	T_EQ_INT(UROM_COLL_UINT32, 6);
	T_EQ_INT(UROM_COLL_UINT64, 7);
	T_EQ_INT(UROM_COLL_FLOAT, 8);
	T_EQ_INT(UROM_COLL_DOUBLE, 9);
	T_EQ_INT(UROM_COLL_DTYPE_MAX, 9);

	T_EQ_INT(UROM_COLL_SUM, 0);
	T_EQ_INT(UROM_COLL_PROD, 1);
	T_EQ_INT(UROM_COLL_MIN, 2);
	T_EQ_INT(UROM_COLL_MAX, 3);
	T_EQ_INT(UROM_COLL_BAND, 4);
	T_EQ_INT(UROM_COLL_BOR, 5);
	T_EQ_INT(UROM_COLL_BXOR, 6);
	T_EQ_INT(UROM_COLL_OP_MAX, 6);

	T_EQ_INT(sizeof(struct urom_worker_coll_cmd), 112);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, type), 0);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, context), 8);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, team), 16);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, my_id), 24);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, sbuf_va), 32);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, rbuf_va), 40);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, count), 48);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, dtype), 56);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, op), 64);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, root), 72);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, flags), 80);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, ntrail), 88);

	T_EQ_INT(sizeof(struct urom_worker_notify_coll), 32);
	T_EQ_INT(offsetof(struct urom_worker_notify_coll, type), 0);
	T_EQ_INT(offsetof(struct urom_worker_notify_coll, context), 8);
	T_EQ_INT(offsetof(struct urom_worker_notify_coll, status), 16);
	T_EQ_INT(offsetof(struct urom_worker_notify_coll, seq), 24);

	T_EQ_INT(UROM_COLL_AM_UCP_ID, 17);
	T_EQ_INT(UROM_COLL_WIRE_ARRIVE, 1);
	T_EQ_INT(UROM_COLL_WIRE_DONE, 2);
	T_EQ_INT(UROM_COLL_WIRE_BAD, 1);
	T_EQ_INT(UROM_COLL_WIRE_SMEMH, 2);
	T_EQ_INT(UROM_COLL_WIRE_RMEMH, 4);
	T_EQ_INT(UROM_COLL_WIRE_FLAGS_ALL, 7);
	T_EQ_INT(sizeof(struct urom_coll_wire_memh), 8);
	T_EQ_INT(UROM_COLL_MEMH_MAX, 1024);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, smemh_len), 96);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, rmemh_len), 104);
	T_EQ_INT(sizeof(struct urom_coll_wire), 88);
	T_EQ_INT(offsetof(struct urom_coll_wire, magic), 0);
	T_EQ_INT(offsetof(struct urom_coll_wire, kind), 4);
	T_EQ_INT(offsetof(struct urom_coll_wire, flags), 6);
	T_EQ_INT(offsetof(struct urom_coll_wire, tag), 8);
	T_EQ_INT(offsetof(struct urom_coll_wire, seq), 16);
	T_EQ_INT(offsetof(struct urom_coll_wire, sender), 24);
	T_EQ_INT(offsetof(struct urom_coll_wire, sig), 32);
	T_EQ_INT(offsetof(struct urom_coll_wire, team_hash), 40);
	T_EQ_INT(offsetof(struct urom_coll_wire, sva), 48);
	T_EQ_INT(offsetof(struct urom_coll_wire, rva), 56);
	T_EQ_INT(offsetof(struct urom_coll_wire, voff), 64);
	T_EQ_INT(offsetof(struct urom_coll_wire, vlen), 72);
	T_EQ_INT(offsetof(struct urom_coll_wire, reserved), 80);
	{
		/* The magic reads "1COL" on the (little-endian) wire. */
		uint32_t m = UROM_COLL_WIRE_MAGIC;

		T_TRUE(memcmp(&m, "1COL", 4) == 0);
	}
}

static struct urom_coll_wire good_wire(uint16_t kind)
{
	struct urom_coll_wire w = {
		.magic = UROM_COLL_WIRE_MAGIC,
		.kind = kind,
		.tag = 0xc011,
		.seq = 7,
		.sender = 3,
		.sig = 0x0123456789abcdefull,
		.team_hash = UINT64_MAX,
		.sva = 0x10000,
		.rva = 0x20000,
		.voff = 64,
		.vlen = 128,
	};

	return w;
}

/* 1 when parse accepts w's bytes (at an odd address, exactly sizeof(w) of them). */
static int parses(const struct urom_coll_wire *w)
{
	uint8_t buf[1 + sizeof(*w)];
	struct urom_coll_wire out;

	memcpy(buf + 1, w, sizeof(*w));
	return urom_coll_wire_parse(buf + 1, sizeof(*w), &out, NULL, NULL, NULL);
}

/* The worker-to-worker parser on good, short, long and lying messages. */
static void test_wire(void)
{
	uint8_t buf[sizeof(struct urom_coll_wire) + 8] = {0};
	struct urom_coll_wire w = good_wire(UROM_COLL_WIRE_ARRIVE), out, bad;

	memset(&out, 0xa5, sizeof(out));
	memcpy(buf, &w, sizeof(w));
	T_TRUE(urom_coll_wire_parse(buf, sizeof(w), &out, NULL, NULL, NULL));
	T_TRUE(memcmp(&out, &w, sizeof(w)) == 0); /* every field as sent */
	T_EQ_INT(out.kind, UROM_COLL_WIRE_ARRIVE);
	T_EQ_INT(out.seq, 7);
	T_EQ_INT(out.vlen, 128);
	T_TRUE(parses(&w)); /* unaligned */

	w = good_wire(UROM_COLL_WIRE_DONE);
	w.sva = w.rva = w.voff = w.vlen = 0; /* DONE carries no buffers */
	memcpy(buf, &w, sizeof(w));
	T_TRUE(urom_coll_wire_parse(buf, sizeof(w), &out, NULL, NULL, NULL));
	T_EQ_INT(out.kind, UROM_COLL_WIRE_DONE);
	T_EQ_INT(out.tag, 0xc011);

	bad = good_wire(UROM_COLL_WIRE_ARRIVE);
	bad.flags = UROM_COLL_WIRE_BAD; /* a member that refused the collective: a valid message */
	T_TRUE(parses(&bad));
	bad = good_wire(UROM_COLL_WIRE_ARRIVE);
	bad.sender = 0;
	bad.sig = 0;
	bad.team_hash = 0; /* the parser leaves these to the team's checks */
	T_TRUE(parses(&bad));

	/* Length: exactly one message. */
	w = good_wire(UROM_COLL_WIRE_ARRIVE);
	memcpy(buf, &w, sizeof(w));
	T_TRUE(!urom_coll_wire_parse(buf, sizeof(w) - 1, &out, NULL, NULL, NULL)); /* 87 */
	T_TRUE(!urom_coll_wire_parse(buf, sizeof(w) + 1, &out, NULL, NULL, NULL)); /* 89 */
	T_TRUE(!urom_coll_wire_parse(buf, 0, &out, NULL, NULL, NULL));
	T_TRUE(!urom_coll_wire_parse(buf, 2 * sizeof(w), &out, NULL, NULL, NULL));
	T_TRUE(!urom_coll_wire_parse(NULL, sizeof(w), &out, NULL, NULL, NULL));
	T_TRUE(!urom_coll_wire_parse(buf, sizeof(w), NULL, NULL, NULL, NULL));

	/* Magic, every byte of it. */
	for (int i = 0; i < 4; i++) {
		bad = good_wire(UROM_COLL_WIRE_ARRIVE);
		((uint8_t *)&bad.magic)[i] ^= 0x20;
		T_TRUE(!parses(&bad));
	}
	bad = good_wire(UROM_COLL_WIRE_ARRIVE);
	bad.magic = __builtin_bswap32(UROM_COLL_WIRE_MAGIC); /* the other byte order */
	T_TRUE(!parses(&bad));

	/* Kind. */
	static const uint16_t kinds[] = {0, 3, 0x100, 0xffff};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		bad = good_wire(UROM_COLL_WIRE_ARRIVE);
		bad.kind = kinds[i];
		T_TRUE(!parses(&bad));
	}

	/* Flags: any bit outside UROM_COLL_WIRE_FLAGS_ALL. */
	for (int b = 0; b < 16; b++) {
		if ((1u << b) & UROM_COLL_WIRE_FLAGS_ALL)
			continue;
		bad = good_wire(UROM_COLL_WIRE_DONE);
		bad.flags = (uint16_t)(1u << b);
		T_TRUE(!parses(&bad));
		bad.flags |= UROM_COLL_WIRE_BAD;
		T_TRUE(!parses(&bad));
	}

	/* The memh trailer of an ARRIVE (SMEMH / RMEMH): lengths, flags and the exact size. */
	{
		uint8_t t[sizeof(struct urom_coll_wire) + 8 + 2 * UROM_COLL_MEMH_MAX + 1];
		struct urom_coll_wire_memh m = {.slen = 40, .rlen = 24}, mo;
		const uint8_t *sm = NULL, *rm = NULL;
		size_t n = sizeof(w) + sizeof(m) + 64;

		w = good_wire(UROM_COLL_WIRE_ARRIVE);
		w.flags = UROM_COLL_WIRE_SMEMH | UROM_COLL_WIRE_RMEMH;
		memcpy(t, &w, sizeof(w));
		memcpy(t + sizeof(w), &m, sizeof(m));
		for (size_t k = 0; k < 64; k++)
			t[sizeof(w) + sizeof(m) + k] = (uint8_t)k;
		T_TRUE(urom_coll_wire_parse(t, n, &out, &mo, &sm, &rm));
		T_EQ_INT(mo.slen, 40);
		T_EQ_INT(mo.rlen, 24);
		T_TRUE(sm == t + 96 && rm == t + 136 && sm[0] == 0 && rm[0] == 40);
		T_TRUE(urom_coll_wire_parse(t, n, &out, NULL, NULL, NULL)); /* lengths checked */
		T_TRUE(!urom_coll_wire_parse(t, n - 1, &out, &mo, &sm, &rm));
		T_TRUE(!urom_coll_wire_parse(t, n + 1, &out, &mo, &sm, &rm));
		T_TRUE(!urom_coll_wire_parse(t, sizeof(w), &out, &mo, &sm, &rm)); /* no trailer */
		T_TRUE(!urom_coll_wire_parse(t, sizeof(w) + 4, &out, &mo, &sm, &rm));
		/* only the send memh: RMEMH must be off, rlen 0 */
		m.rlen = 0;
		memcpy(t + sizeof(w), &m, sizeof(m));
		T_TRUE(!urom_coll_wire_parse(t, sizeof(w) + 8 + 40, &out, &mo, &sm, &rm));
		((struct urom_coll_wire *)t)->flags = UROM_COLL_WIRE_SMEMH;
		T_TRUE(urom_coll_wire_parse(t, sizeof(w) + 8 + 40, &out, &mo, &sm, &rm));
		T_TRUE(rm == NULL && sm == t + 96);
		/* a flag with a zero length, a length without its flag */
		m.slen = 0;
		memcpy(t + sizeof(w), &m, sizeof(m));
		T_TRUE(!urom_coll_wire_parse(t, sizeof(w) + 8, &out, &mo, &sm, &rm));
		/* past UROM_COLL_MEMH_MAX */
		m.slen = UROM_COLL_MEMH_MAX + 1;
		memcpy(t + sizeof(w), &m, sizeof(m));
		T_TRUE(!urom_coll_wire_parse(t, sizeof(w) + 8 + m.slen, &out, &mo, &sm, &rm));
		m.slen = UROM_COLL_MEMH_MAX;
		memcpy(t + sizeof(w), &m, sizeof(m));
		T_TRUE(urom_coll_wire_parse(t, sizeof(w) + 8 + m.slen, &out, &mo, &sm, &rm));
		/* lengths that wrap a 32-bit sum */
		m.slen = 0xffffffffu;
		m.rlen = 9;
		memcpy(t + sizeof(w), &m, sizeof(m));
		((struct urom_coll_wire *)t)->flags = UROM_COLL_WIRE_SMEMH | UROM_COLL_WIRE_RMEMH;
		T_TRUE(!urom_coll_wire_parse(t, sizeof(w) + 8 + 8, &out, &mo, &sm, &rm));
		/* not on DONE, not with BAD */
		m.slen = 40;
		m.rlen = 0;
		memcpy(t + sizeof(w), &m, sizeof(m));
		((struct urom_coll_wire *)t)->flags = UROM_COLL_WIRE_SMEMH | UROM_COLL_WIRE_BAD;
		T_TRUE(!urom_coll_wire_parse(t, sizeof(w) + 8 + 40, &out, &mo, &sm, &rm));
		((struct urom_coll_wire *)t)->flags = UROM_COLL_WIRE_SMEMH;
		((struct urom_coll_wire *)t)->kind = UROM_COLL_WIRE_DONE;
		T_TRUE(!urom_coll_wire_parse(t, sizeof(w) + 8 + 40, &out, &mo, &sm, &rm));
	}

	/* reserved must be 0, tag and seq nonzero. */
	bad = good_wire(UROM_COLL_WIRE_ARRIVE);
	bad.reserved = 1;
	T_TRUE(!parses(&bad));
	bad.reserved = 1ull << 63;
	T_TRUE(!parses(&bad));
	bad = good_wire(UROM_COLL_WIRE_ARRIVE);
	bad.tag = 0;
	T_TRUE(!parses(&bad));
	bad = good_wire(UROM_COLL_WIRE_DONE);
	bad.seq = 0;
	T_TRUE(!parses(&bad));
}

static void test_init(void)
{
	T_REFUSED(urom_coll_init(0x8, UROM_WORKER_COLL_VERSION + 1), DOCA_ERROR_UNSUPPORTED_VERSION,
		  "[urom_coll_init] worker_coll version 0x4");
	T_REFUSED(urom_coll_init(0x8, 1), DOCA_ERROR_UNSUPPORTED_VERSION, "version");
	T_REFUSED(urom_coll_init(0x8, 0), DOCA_ERROR_UNSUPPORTED_VERSION, "version");
	T_REFUSED(urom_coll_init(0x8, UINT64_MAX), DOCA_ERROR_UNSUPPORTED_VERSION, "version");
	/* the record names the host half's log source */
	T_REFUSED(urom_coll_init(0x8, 0x102), DOCA_ERROR_UNSUPPORTED_VERSION, "[UROM::COLL::HOST]");
}

/* Valid arguments on a worker context that never started (before and after init). */
static void test_idle_worker(struct doca_urom_worker *worker, struct doca_pe *pe, int initialized)
{
	uint64_t members[UROM_COLL_MAX_MEMBERS];
	struct urom_coll_team *team = TEAM_SENTINEL;

	for (uint32_t i = 0; i < UROM_COLL_MAX_MEMBERS; i++)
		members[i] = 100 + i;
	if (!initialized) {
		/* nothing is submitted before urom_coll_init() succeeded */
		T_REFUSED(urom_coll_team_create(worker, pe, 0x11, 100, members, 2, &team),
			  DOCA_ERROR_BAD_STATE, "urom_coll_init() was not called");
		T_TRUE(team == TEAM_SENTINEL);
		T_REFUSED(urom_coll_team_create_strided(worker, pe, 0x11, 0, 0, 1, 4, &team),
			  DOCA_ERROR_BAD_STATE, "urom_coll_init() was not called");
		T_TRUE(team == TEAM_SENTINEL);
		return;
	}
	/*
	 * The library refuses the task (the context is not running); the host half frees its
	 * team, so the same tag is refused the same way again rather than as ALREADY_EXIST.
	 */
	t_log_reset();
	T_STATUS(urom_coll_team_create(worker, pe, 0x11, 100, members, 2, &team),
		 DOCA_ERROR_BAD_STATE);
	T_TRUE(team == TEAM_SENTINEL);
	T_TRUE(t_log_nb >= 1); /* the library said why */
	T_STATUS(urom_coll_team_create(worker, pe, 0x11, 100, members, 2, &team),
		 DOCA_ERROR_BAD_STATE);
	T_TRUE(team == TEAM_SENTINEL);
	/* the largest team, this host last */
	T_STATUS(urom_coll_team_create(worker, pe, 0x12, 100 + UROM_COLL_MAX_MEMBERS - 1, members,
				       UROM_COLL_MAX_MEMBERS, &team),
		 DOCA_ERROR_BAD_STATE);
	T_TRUE(team == TEAM_SENTINEL);
	/* a single member */
	T_STATUS(urom_coll_team_create(worker, pe, 0x13, 100, members, 1, &team),
		 DOCA_ERROR_BAD_STATE);
	T_TRUE(team == TEAM_SENTINEL);
	/* the last ids before the top of the range do not overflow */
	T_STATUS(urom_coll_team_create_strided(worker, pe, 0x14, UINT64_MAX, UINT64_MAX - 2, 1, 3,
					       &team),
		 DOCA_ERROR_BAD_STATE);
	T_TRUE(team == TEAM_SENTINEL);
	T_STATUS(urom_coll_team_create_strided(worker, pe, 0x15, 1ull << 63, 0, 1ull << 63, 2,
					       &team),
		 DOCA_ERROR_BAD_STATE);
	T_TRUE(team == TEAM_SENTINEL);
	t_log_reset();
}

/* Bad team arguments: INVALID_VALUE before anything reaches the worker, *team_p untouched. */
static void test_team_args(struct doca_urom_worker *worker, struct doca_pe *pe)
{
	uint64_t members[UROM_COLL_MAX_MEMBERS + 1];
	struct urom_coll_team *team = TEAM_SENTINEL;
	const uint64_t dup_mine[] = {1, 2, 1}, dup_other[] = {1, 2, 2}, three[] = {1, 2, 3};

	for (uint32_t i = 0; i <= UROM_COLL_MAX_MEMBERS; i++)
		members[i] = 100 + i;

#define T_TEAM_REFUSED(call, cause)                                                                \
	do {                                                                                       \
		T_REFUSED(call, DOCA_ERROR_INVALID_VALUE, cause);                                  \
		T_TRUE(team == TEAM_SENTINEL);                                                     \
	} while (0)

	T_TEAM_REFUSED(urom_coll_team_create(NULL, pe, 1, 100, members, 2, &team),
		       "[urom_coll_team_create] invalid argument");
	T_TEAM_REFUSED(urom_coll_team_create(worker, NULL, 1, 100, members, 2, &team),
		       "invalid argument");
	T_TEAM_REFUSED(urom_coll_team_create(worker, pe, 1, 100, NULL, 2, &team),
		       "invalid argument");
	T_REFUSED(urom_coll_team_create(worker, pe, 1, 100, members, 2, NULL),
		  DOCA_ERROR_INVALID_VALUE, "invalid argument");
	T_TEAM_REFUSED(urom_coll_team_create(worker, pe, 0, 100, members, 2, &team), "tag 0");
	T_TEAM_REFUSED(urom_coll_team_create(worker, pe, 1, 100, members, 0, &team), "size 0");
	T_TEAM_REFUSED(urom_coll_team_create(worker, pe, 1, 100, members, UROM_COLL_MAX_MEMBERS + 1,
					     &team),
		       "size 65");
	T_TEAM_REFUSED(urom_coll_team_create(worker, pe, 1, 100, members, UINT32_MAX, &team),
		       "invalid argument");
	T_TEAM_REFUSED(urom_coll_team_create(worker, pe, 1, 1, dup_mine, 3, &team),
		       "member 1 listed twice");
	T_TEAM_REFUSED(urom_coll_team_create(worker, pe, 1, 1, dup_other, 3, &team),
		       "member 2 listed twice");
	T_TEAM_REFUSED(urom_coll_team_create(worker, pe, 1, 4, three, 3, &team),
		       "domain id 4) is not a member");
	/* the size check lets the largest team through; membership is what refuses it here */
	T_TEAM_REFUSED(
		urom_coll_team_create(worker, pe, 1, 99, members, UROM_COLL_MAX_MEMBERS, &team),
		"is not a member");
	T_TEAM_REFUSED(urom_coll_team_create(worker, pe, 1, 100 + UROM_COLL_MAX_MEMBERS, members,
					     UROM_COLL_MAX_MEMBERS, &team),
		       "is not a member");

	/* Strided: its own checks, then the member list's. */
	T_TEAM_REFUSED(urom_coll_team_create_strided(worker, pe, 1, 0, 0, 0, 2, &team),
		       "[urom_coll_team_create_strided] invalid team");
	T_TEAM_REFUSED(urom_coll_team_create_strided(worker, pe, 1, 0, 0, 1, 0, &team), "size 0");
	T_TEAM_REFUSED(urom_coll_team_create_strided(worker, pe, 1, 0, 0, 1,
						     UROM_COLL_MAX_MEMBERS + 1, &team),
		       "size 65");
	/* start + (size - 1) * stride past UINT64_MAX */
	T_TEAM_REFUSED(urom_coll_team_create_strided(worker, pe, 1, UINT64_MAX - 1, UINT64_MAX - 1,
						     1, 3, &team),
		       "invalid team");
	T_TEAM_REFUSED(urom_coll_team_create_strided(worker, pe, 1, 0, 0, 1ull << 63, 3, &team),
		       "invalid team");
	T_TEAM_REFUSED(urom_coll_team_create_strided(worker, pe, 1, 1, 1, UINT64_MAX, 2, &team),
		       "invalid team");
	T_TEAM_REFUSED(urom_coll_team_create_strided(worker, pe, 1, 0, 2, UINT64_MAX / 62,
						     UROM_COLL_MAX_MEMBERS, &team),
		       "invalid team");
	/* a range that fits, passed on to team_create, which refuses it */
	T_TEAM_REFUSED(urom_coll_team_create_strided(worker, pe, 1, 7, UINT64_MAX - 2, 1, 3, &team),
		       "[urom_coll_team_create] this host (domain id 7) is not a member");
	T_TEAM_REFUSED(urom_coll_team_create_strided(worker, pe, 0, 0, 0, 1, 2, &team),
		       "[urom_coll_team_create] invalid argument");
	T_TEAM_REFUSED(urom_coll_team_create_strided(NULL, pe, 1, 0, 0, 1, 2, &team),
		       "invalid argument");
	T_TEAM_REFUSED(urom_coll_team_create_strided(worker, NULL, 1, 0, 0, 1, 2, &team),
		       "invalid argument");
	T_REFUSED(urom_coll_team_create_strided(worker, pe, 1, 0, 0, 1, 2, NULL),
		  DOCA_ERROR_INVALID_VALUE, "invalid argument");
#undef T_TEAM_REFUSED
}

/* NULL teams, requests and commands. */
static void test_null_handles(void)
{
	uint64_t a[8] = {0}, b[8] = {0}, counts[1] = {1}, displs[1] = {0};
	struct urom_worker_coll_cmd c = {.type = UROM_WORKER_CMD_COLL_BARRIER};
	struct urom_coll_req *req = REQ_SENTINEL, *reqs[2] = {NULL, NULL};
	union doca_data cookie = {.u64 = 1};

	T_REFUSED(urom_coll_test(NULL), DOCA_ERROR_INVALID_VALUE, "[urom_coll_test] invalid");
	T_REFUSED(urom_coll_wait(NULL, 0), DOCA_ERROR_INVALID_VALUE, "[urom_coll_wait] invalid");
	T_REFUSED(urom_coll_wait(NULL, 1000), DOCA_ERROR_INVALID_VALUE, "invalid argument");
	T_REFUSED(urom_coll_waitall(NULL, 1, 0), DOCA_ERROR_INVALID_VALUE,
		  "[urom_coll_waitall] invalid argument");
	T_QUIET(urom_coll_waitall(NULL, 0, 0), DOCA_SUCCESS);
	T_QUIET(urom_coll_waitall(reqs, 2, 0), DOCA_SUCCESS); /* NULL entries are skipped */
	app_reset();
	urom_coll_req_free(NULL);
	T_EQ_INT(app_nb, 0);

	T_REFUSED(urom_coll_team_wait_ready(NULL, 0), DOCA_ERROR_INVALID_VALUE,
		  "[urom_coll_team_wait_ready] invalid argument");
	T_REFUSED(urom_coll_team_destroy(NULL, 0), DOCA_ERROR_INVALID_VALUE,
		  "[urom_coll_team_destroy] invalid argument");
	T_EQ_INT(urom_coll_team_rank(NULL), 0);
	T_EQ_INT(urom_coll_team_size(NULL), 0);

	/* Collective starts on no team: refused, *req untouched. */
#define T_START_REFUSED(call)                                                                      \
	do {                                                                                       \
		T_REFUSED(call, DOCA_ERROR_INVALID_VALUE, "invalid argument");                     \
		T_TRUE(req == REQ_SENTINEL);                                                       \
	} while (0)
	T_START_REFUSED(urom_coll_barrier(NULL, &req));
	T_START_REFUSED(urom_coll_bcast(NULL, a, b, 1, UROM_COLL_INT64, 0, &req));
	T_START_REFUSED(urom_coll_reduce(NULL, a, b, 1, UROM_COLL_INT64, UROM_COLL_SUM, 0, &req));
	T_START_REFUSED(urom_coll_allreduce(NULL, a, b, 1, UROM_COLL_DOUBLE, UROM_COLL_MAX, &req));
	T_START_REFUSED(urom_coll_allreduce(NULL, UROM_COLL_IN_PLACE, b, 1, UROM_COLL_INT32,
					    UROM_COLL_SUM, &req));
	T_START_REFUSED(urom_coll_allgather(NULL, a, b, 1, UROM_COLL_UINT8, &req));
	T_START_REFUSED(urom_coll_alltoall(NULL, a, b, 1, UROM_COLL_UINT64, &req));
	T_START_REFUSED(urom_coll_alltoallv(NULL, a, counts, displs, b, counts, displs,
					    UROM_COLL_INT64, &req));
	T_START_REFUSED(
		urom_coll_reduce_scatter(NULL, a, b, 1, UROM_COLL_FLOAT, UROM_COLL_MIN, &req));
	/* no request pointer */
	T_REFUSED(urom_coll_barrier(NULL, NULL), DOCA_ERROR_INVALID_VALUE, "invalid argument");
	T_REFUSED(urom_coll_allreduce(NULL, a, b, 1, UROM_COLL_INT64, UROM_COLL_SUM, NULL),
		  DOCA_ERROR_INVALID_VALUE, "invalid argument");
	/* refused before the team is looked at */
	T_REFUSED(urom_coll_bcast(NULL, UROM_COLL_IN_PLACE, b, 1, UROM_COLL_INT64, 0, &req),
		  DOCA_ERROR_INVALID_VALUE, "in-place");
	T_TRUE(req == REQ_SENTINEL);
	T_REFUSED(urom_coll_alltoallv(NULL, a, NULL, displs, b, counts, displs, UROM_COLL_INT64,
				      &req),
		  DOCA_ERROR_INVALID_VALUE, "NULL count or displacement array");
	T_REFUSED(urom_coll_alltoallv(NULL, a, counts, displs, b, counts, NULL, UROM_COLL_INT64,
				      &req),
		  DOCA_ERROR_INVALID_VALUE, "NULL count or displacement array");
	T_TRUE(req == REQ_SENTINEL);
#undef T_START_REFUSED

	T_REFUSED(urom_coll_submit(NULL, &c, NULL, cookie, done_cb), DOCA_ERROR_INVALID_VALUE,
		  "[urom_coll_submit] invalid argument");
	T_REFUSED(urom_coll_submit(NULL, NULL, NULL, cookie, done_cb), DOCA_ERROR_INVALID_VALUE,
		  "invalid argument");
	T_REFUSED(urom_coll_submit(NULL, &c, NULL, cookie, NULL), DOCA_ERROR_INVALID_VALUE,
		  "invalid argument");
	T_REFUSED(urom_coll_submit_wait(NULL, &c, NULL, 0), DOCA_ERROR_INVALID_VALUE,
		  "[urom_coll_submit_wait] invalid argument");
}

int main(void)
{
	struct doca_urom_worker *worker = NULL;
	struct doca_pe *pe = NULL;

	app_capture();
	/* The library's own records (SDK stream) too, so the run stays quiet. */
	(void)t_log_capture_level(DOCA_LOG_LEVEL_ERROR);

	test_layouts();
	test_wire();
	T_OK(doca_pe_create(&pe));
	T_OK(doca_urom_worker_create(&worker));

	test_init();
	test_idle_worker(worker, pe, 0); /* after refused inits only */
	app_reset();
	T_OK(urom_coll_init(0x8, UROM_WORKER_COLL_VERSION));
	T_EQ_INT(app_nb, 0);
	test_idle_worker(worker, pe, 1);
	test_team_args(worker, pe);
	test_null_handles();

	T_OK(doca_urom_worker_destroy(worker));
	T_OK(doca_pe_destroy(pe));
	T_DONE();
}
