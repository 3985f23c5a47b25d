/*
 * libFuzzer target for the device declaration parser (sdp_dev_decl_parse in
 * src/common/provider.c): SOFTDPU_DEVICES (entries split by ';') and the device configuration
 * file devices.conf (lines, '#' comments), both written by users; and the value parsers the
 * software NICs apply to what it hands them (sdp_nic_parse_decimal, sdp_nic_parse_mac in
 * src/providers/nic_decl.c).
 *
 * The first input byte picks the mode (bit 0: file lines or environment entries); the rest is
 * the text. Properties checked beyond "no crash" (ASan/UBSan): every accepted declaration
 * satisfies the documented syntax (provider 1..SDP_PROVIDER_NAME_MAX-1 characters of a-z 0-9 _;
 * keys non-empty of A-Z a-z 0-9 _ . -, unique, at most 64; values non-empty, no ',' ';', no
 * surrounding blanks, and in file mode no '#' or newline); the count returned is the number of
 * declarations handed over; accepted + refused never exceeds the entries; and every accepted
 * declaration round-trips: written back as `provider:k=v,...` and parsed again it gives exactly
 * the same declaration. sdp_nic_parse_decimal accepts exactly the non-empty all-digit strings
 * that fit 64 bits, with the value strtoull gives; sdp_nic_parse_mac accepts exactly
 * xx:xx:xx:xx:xx:xx and prints back to the same text (case aside).
 *
 * With -DSDP_FUZZ_MAIN this file has its own main() (tests/fuzz/fuzz_main.h): the replay test.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "doca_log.h"
#include "sdp_nic_decl.h"
#include "sdp_provider.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_DECL_MAX 64

/* One accepted declaration, copied out of the callback. */
struct fuzz_decl {
	char provider[SDP_PROVIDER_NAME_MAX];
	size_t num_params;
	char *keys[FUZZ_DECL_MAX];
	char *values[FUZZ_DECL_MAX];
};

struct fuzz_state {
	int lines;
	size_t good, bad;
	struct fuzz_decl last; /* the latest accepted one (the round trip checks it) */
	int have_last;
};

static void fuzz_decl_clear(struct fuzz_decl *d)
{
	for (size_t i = 0; i < d->num_params; i++) {
		free(d->keys[i]);
		free(d->values[i]);
	}
	d->num_params = 0;
}

static int key_char(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '-';
}

/* The documented syntax of one accepted declaration; aborts when it does not hold. */
static void check_decl(const struct sdp_dev_decl *decl, int lines)
{
	size_t n;

	if (decl->provider == NULL || decl->origin == NULL || decl->num_params > FUZZ_DECL_MAX ||
	    (decl->num_params > 0 && decl->params == NULL))
		abort();
	n = strlen(decl->provider);
	if (n == 0 || n >= SDP_PROVIDER_NAME_MAX)
		abort();
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)decl->provider[i];

		if (!(islower(c) || isdigit(c) || c == '_'))
			abort();
	}
	for (size_t i = 0; i < decl->num_params; i++) {
		const char *k = decl->params[i].key, *v = decl->params[i].value;
		size_t vlen;

		if (k == NULL || v == NULL || *k == '\0' || *v == '\0')
			abort();
		for (const char *c = k; *c != '\0'; c++)
			if (!key_char((unsigned char)*c))
				abort();
		vlen = strlen(v);
		if (isspace((unsigned char)v[0]) || isspace((unsigned char)v[vlen - 1]))
			abort();
		if (strpbrk(v, ",;") != NULL || (lines && strpbrk(v, "#\n") != NULL))
			abort();
		for (size_t j = 0; j < i; j++)
			if (strcmp(decl->params[j].key, k) == 0)
				abort(); /* a key given twice was accepted */
		if (sdp_dev_decl_get(decl, k) != v)
			abort();
	}
}

static void on_decl(const struct sdp_dev_decl *decl, void *arg)
{
	struct fuzz_state *st = arg;

	check_decl(decl, st->lines);
	st->good++;
	fuzz_decl_clear(&st->last);
	snprintf(st->last.provider, sizeof(st->last.provider), "%s", decl->provider);
	for (size_t i = 0; i < decl->num_params; i++) {
		st->last.keys[i] = strdup(decl->params[i].key);
		st->last.values[i] = strdup(decl->params[i].value);
		if (st->last.keys[i] == NULL || st->last.values[i] == NULL)
			abort();
		st->last.num_params = i + 1;
	}
	st->have_last = 1;
}

static void on_bad(const char *origin, const char *reason, void *arg)
{
	struct fuzz_state *st = arg;

	if (origin == NULL || reason == NULL || *reason == '\0')
		abort();
	st->bad++;
}

/* What the round trip must give back: the declaration it was written from. */
struct fuzz_rt {
	const struct fuzz_decl *want;
	int seen;
};

static void on_rt(const struct sdp_dev_decl *decl, void *arg)
{
	struct fuzz_rt *rt = arg;

	rt->seen++;
	if (strcmp(decl->provider, rt->want->provider) != 0 ||
	    decl->num_params != rt->want->num_params)
		abort();
	for (size_t i = 0; i < decl->num_params; i++)
		if (strcmp(decl->params[i].key, rt->want->keys[i]) != 0 ||
		    strcmp(decl->params[i].value, rt->want->values[i]) != 0)
			abort();
}

static void round_trip(const struct fuzz_decl *d, int lines)
{
	struct fuzz_rt rt = {.want = d};
	size_t cap = 64, len;
	char *text;

	for (size_t i = 0; i < d->num_params; i++)
		cap += strlen(d->keys[i]) + strlen(d->values[i]) + 2;
	text = malloc(cap);
	if (text == NULL)
		abort();
	len = (size_t)snprintf(text, cap, "%s", d->provider);
	for (size_t i = 0; i < d->num_params; i++)
		len += (size_t)snprintf(text + len, cap - len, "%c%s=%s", i == 0 ? ':' : ',',
					d->keys[i], d->values[i]);
	if (sdp_dev_decl_parse(text, "fuzz", lines, on_rt, NULL, &rt) != 1 || rt.seen != 1)
		abort();
	free(text);
}

static void check_decimal(const char *s)
{
	uint64_t v = 7;
	doca_error_t st = sdp_nic_parse_decimal(s, &v);
	size_t n = strlen(s);
	int digits = n > 0 && strspn(s, "0123456789") == n;

	if (!digits) {
		if (st != DOCA_ERROR_INVALID_VALUE || v != 7)
			abort();
		return;
	}
	errno = 0;
	unsigned long long ref = strtoull(s, NULL, 10);
	if (errno == ERANGE) {
		if (st != DOCA_ERROR_TOO_BIG)
			abort();
	} else if (st != DOCA_SUCCESS || v != ref) {
		abort();
	}
}

static void check_mac(const char *s)
{
	uint8_t mac[6] = {0};
	char back[18];
	int want = strlen(s) == 17;

	for (int i = 0; want && i < 17; i++)
		want = (i % 3 == 2) ? s[i] == ':' : isxdigit((unsigned char)s[i]) != 0;
	if (sdp_nic_parse_mac(s, mac) != want)
		abort();
	if (!want)
		return;
	snprintf(back, sizeof(back), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
	if (strcasecmp(back, s) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	struct fuzz_state st = {0};
	size_t good, entries = 0;
	char *text;

	if (!quiet) {
		(void)doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
		quiet = 1;
	}
	if (size < 1)
		return 0;
	st.lines = data[0] & 1;
	text = malloc(size);
	if (text == NULL)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';

	good = sdp_dev_decl_parse(text, st.lines ? "devices.conf" : "SOFTDPU_DEVICES", st.lines,
				  on_decl, on_bad, &st);
	if (good != st.good)
		abort();
	/* At most one entry per ';' and newline, plus one. */
	for (const char *c = text; *c != '\0'; c++)
		entries += *c == ';' || *c == '\n';
	if (st.good + st.bad > entries + 1)
		abort();
	if (st.have_last) {
		round_trip(&st.last, st.lines);
		for (size_t i = 0; i < st.last.num_params; i++) {
			check_decimal(st.last.values[i]);
			check_mac(st.last.values[i]);
		}
	}
	fuzz_decl_clear(&st.last);
	if (size - 1 <= 64) {
		check_decimal(text);
		check_mac(text);
	}
	free(text);
	return 0;
}

#ifdef SDP_FUZZ_MAIN
#include "fuzz_main.h"

static const char *const fuzz_words[] = {
	"loop",
	"gen",
	"pcap",
	"afpacket",
	"host",
	"name",
	"peer",
	"rx",
	"tx",
	"mac",
	"speed",
	"loop=1",
	"0",
	"18446744073709551615",
	"18446744073709551616",
	"02:00:00:aa:BB:cc",
	"wire0",
	":",
	"=",
	",",
	";",
	"\n",
	"#",
	" ",
	"\t",
	"x.y-z_1",
	"Bad",
	"/tmp/a.pcap",
};

static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	size_t len = 1, words = fuzz_rnd() % 40;

	buf[0] = (uint8_t)fuzz_rnd();
	for (size_t i = 0; i < words && len + 64 < cap; i++) {
		uint64_t r = fuzz_rnd();

		if (r % 16 == 0) {
			buf[len++] = (uint8_t)(r >> 8); /* a random byte */
		} else {
			const char *w =
				fuzz_words[(r >> 8) % (sizeof(fuzz_words) / sizeof(fuzz_words[0]))];

			memcpy(buf + len, w, strlen(w));
			len += strlen(w);
		}
	}
	return len;
}

#endif
