/*
 * Small helpers for the unit tests (liburing style: one program per feature, exit 0 pass,
 * 1 fail, 77 skip). A failed check says where, what it expected and what it got, and the test
 * goes on so one run shows every failure.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef T_HELPERS_H_
#define T_HELPERS_H_

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_error.h"

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

static int t_failures __attribute__((unused));

#define t_fail(fmt, ...)                                                                           \
	do {                                                                                       \
		fprintf(stderr, "FAIL %s:%d: " fmt "\n", __FILE__, __LINE__, ##__VA_ARGS__);       \
		t_failures++;                                                                      \
	} while (0)

/* A DOCA call must return `want`. */
#define T_STATUS(call, want)                                                                       \
	do {                                                                                       \
		doca_error_t t_got_ = (call);                                                      \
		doca_error_t t_want_ = (want);                                                     \
		if (t_got_ != t_want_)                                                             \
			t_fail("%s: expected %s, got %s", #call, doca_error_get_name(t_want_),     \
			       doca_error_get_name(t_got_));                                       \
	} while (0)

#define T_OK(call) T_STATUS(call, DOCA_SUCCESS)

#define T_EQ_INT(got, want)                                                                        \
	do {                                                                                       \
		long long t_g_ = (long long)(got), t_w_ = (long long)(want);                       \
		if (t_g_ != t_w_)                                                                  \
			t_fail("%s: expected %lld, got %lld", #got, t_w_, t_g_);                   \
	} while (0)

#define T_EQ_STR(got, want)                                                                        \
	do {                                                                                       \
		const char *t_g_ = (got), *t_w_ = (want);                                          \
		if (t_g_ == NULL || t_w_ == NULL || strcmp(t_g_, t_w_) != 0)                       \
			t_fail("%s: expected \"%s\", got \"%s\"", #got, t_w_ ? t_w_ : "(null)",    \
			       t_g_ ? t_g_ : "(null)");                                            \
	} while (0)

#define T_TRUE(cond)                                                                               \
	do {                                                                                       \
		if (!(cond))                                                                       \
			t_fail("expected %s to hold", #cond);                                      \
	} while (0)

/* Skip the whole test with a reason; the runner prints it as "SKIP <test>: <reason>". */
#define T_SKIP(fmt, ...)                                                                           \
	do {                                                                                       \
		printf("SKIP: " fmt "\n", ##__VA_ARGS__);                                          \
		exit(T_EXIT_SKIP);                                                                 \
	} while (0)

#define T_DONE() return t_failures ? T_EXIT_FAIL : T_EXIT_PASS

#endif /* T_HELPERS_H_ */
