/*
 * libFuzzer target for softdpu's small option parsers (issue 15): the configuration table's
 * scalars (sdp_config_parse_uint, sdp_config_parse_bool: environment variables and device
 * declaration keys), log levels (sdp_log_parse_level: DOCA_LOG_LEVEL, --log-level), the
 * service's CPU lists (uromd_cpuset_parse: --cpus, SPAWN's CPU mask on the command line) and
 * its pid files (sdp_uromd_pid_parse: bytes of a file another process may have written).
 *
 * Input: byte 0 picks the parser, the rest is its text (NUL-terminated copy; the pid parser
 * gets the raw bytes). Each answer is compared with an independent reading written here from
 * the documented grammar, never with the parser's own code:
 *   uint   blanks around; decimal, 0x/0X hexadecimal or 0-led octal; no sign; no overflow
 *   bool   blanks around; 1/0, y/n, yes/no, true/false, on/off in any case
 *   level  blanks around; 10, 20, ..., 70 in decimal (leading zeros allowed) or a level name
 *   cpus   N or N-M (N <= M < 1024, decimal) joined by commas, nothing else; the parsed set is
 *          exactly the union, and formats back to a list that parses to the same set
 *   pid    1 to 10 digits without a leading zero, then one newline, at most INT_MAX
 * A disagreement or a crash fails.
 *
 * With -DSDP_FUZZ_MAIN this file has its own main() (tests/fuzz/fuzz_main.h): the replay test.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sdp_config.h"
#include "sdp_log.h"
#include "uromd.h"
#include "uromd_paths.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAIN_LEN 4096

static void sp_fail(const char *what, const char *in)
{
	fprintf(stderr, "fuzz_small_parsers: %s on \"%.200s\"\n", what, in);
	abort();
}

/* [b, e) of s without the blanks (isspace) around. */
static void sp_trim(const char *s, const char **b, const char **e)
{
	*b = s;
	*e = s + strlen(s);
	while (*b < *e && isspace((unsigned char)**b))
		(*b)++;
	while (*e > *b && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

static int sp_digit(int c, unsigned base)
{
	int v = isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : 99;

	return v < (int)base ? v : -1;
}

/* The uint grammar; 1 and *v when accepted. */
static int ref_uint(const char *s, uint64_t *v)
{
	const char *b, *e;
	unsigned base = 10;
	uint64_t n = 0;

	sp_trim(s, &b, &e);
	if (b == e || !isdigit((unsigned char)*b))
		return 0;
	if (e - b >= 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X')) {
		base = 16;
		b += 2;
		if (b == e)
			return 0;
	} else if (b[0] == '0') {
		base = 8;
	}
	for (; b < e; b++) {
		int d = sp_digit((unsigned char)*b, base);

		if (d < 0 || n > (UINT64_MAX - (uint64_t)d) / base)
			return 0;
		n = n * base + (uint64_t)d;
	}
	*v = n;
	return 1;
}

/* [b, e) equals word, ignoring case. */
static int sp_word(const char *b, const char *e, const char *word)
{
	return (size_t)(e - b) == strlen(word) && strncasecmp(b, word, (size_t)(e - b)) == 0;
}

static int ref_bool(const char *s, uint64_t *v)
{
	static const char *const yes[] = {"1", "y", "yes", "true", "on"};
	static const char *const no[] = {"0", "n", "no", "false", "off"};
	const char *b, *e;

	sp_trim(s, &b, &e);
	for (size_t i = 0; i < 5; i++) {
		if (sp_word(b, e, yes[i]) || sp_word(b, e, no[i])) {
			*v = sp_word(b, e, yes[i]);
			return 1;
		}
	}
	return 0;
}

static int ref_level(const char *s, uint32_t *v)
{
	static const struct {
		const char *name;
		uint32_t level;
	} names[] = {{"disable", 10}, {"crit", 20}, {"error", 30}, {"warning", 40},
		     {"warn", 40},    {"info", 50}, {"debug", 60}, {"trace", 70}};
	const char *b, *e;
	uint64_t n = 0;

	sp_trim(s, &b, &e);
	/* the parser reads at most 15 characters (a level never needs more) */
	if (b == e || e - b > 15)
		return 0;
	if (isdigit((unsigned char)*b)) {
		for (const char *p = b; p < e; p++) {
			if (!isdigit((unsigned char)*p))
				return 0;
			n = n * 10 + (uint64_t)(*p - '0');
			if (n > 1000)
				n = 1000; /* saturate: only 10..70 matter */
		}
		if (n < 10 || n > 70 || n % 10 != 0)
			return 0;
		*v = (uint32_t)n;
		return 1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (sp_word(b, e, names[i].name)) {
			*v = names[i].level;
			return 1;
		}
	return 0;
}

/* One decimal CPU number at *pp below UROMD_MAX_CPUS. */
static int ref_cpu(const char **pp, unsigned long *c)
{
	const char *p = *pp;
	unsigned long n = 0;

	if (!isdigit((unsigned char)*p))
		return 0;
	while (isdigit((unsigned char)*p)) {
		n = n * 10 + (unsigned long)(*p++ - '0');
		if (n >= UROMD_MAX_CPUS)
			n = UROMD_MAX_CPUS; /* saturate */
	}
	if (n >= UROMD_MAX_CPUS)
		return 0;
	*c = n;
	*pp = p;
	return 1;
}

static int ref_cpus(const char *s, struct uromd_cpuset *set)
{
	const char *p = s;

	memset(set, 0, sizeof(*set));
	for (;;) {
		unsigned long lo, hi;

		if (!ref_cpu(&p, &lo))
			return 0;
		hi = lo;
		if (*p == '-') {
			p++;
			if (!ref_cpu(&p, &hi) || hi < lo)
				return 0;
		}
		for (unsigned long c = lo; c <= hi; c++)
			set->bits[c / 64] |= 1ull << (c % 64);
		if (*p == '\0')
			return 1;
		if (*p++ != ',')
			return 0;
	}
}

static int ref_pid(const uint8_t *b, size_t n, long *pid)
{
	long v = 0;

	if (n < 2 || n > 11 || b[n - 1] != '\n' || b[0] < '1' || b[0] > '9')
		return 0;
	for (size_t i = 0; i + 1 < n; i++) {
		if (b[i] < '0' || b[i] > '9')
			return 0;
		v = v * 10 + (b[i] - '0');
	}
	if (v > INT_MAX)
		return 0;
	*pid = v;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size < 1 || size > FUZZ_MAIN_LEN)
		return 0;
	s = malloc(size);
	if (s == NULL)
		abort();
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 5) {
	case 0: {
		uint64_t got = 7, want = 0;
		int ok = sdp_config_parse_uint(s, &got) == DOCA_SUCCESS;

		if (ok != ref_uint(s, &want) || (ok && got != want))
			sp_fail("sdp_config_parse_uint disagrees with the grammar", s);
		break;
	}
	case 1: {
		uint64_t got = 7, want = 0;
		int ok = sdp_config_parse_bool(s, &got) == DOCA_SUCCESS;

		if (ok != ref_bool(s, &want) || (ok && got != want))
			sp_fail("sdp_config_parse_bool disagrees with the grammar", s);
		break;
	}
	case 2: {
		uint32_t got = 7, want = 0;
		int ok = sdp_log_parse_level(s, &got) == DOCA_SUCCESS;

		if (ok != ref_level(s, &want) || (ok && got != want))
			sp_fail("sdp_log_parse_level disagrees with the grammar", s);
		break;
	}
	case 3: {
		struct uromd_cpuset got, want, back;
		char text[8192];
		int ok = uromd_cpuset_parse(s, &got) == DOCA_SUCCESS;

		if (ok != ref_cpus(s, &want) || (ok && memcmp(&got, &want, sizeof(got)) != 0))
			sp_fail("uromd_cpuset_parse disagrees with the grammar", s);
		if (ok) {
			uromd_cpuset_format(&got, text, sizeof(text));
			if (uromd_cpuset_parse(text, &back) != DOCA_SUCCESS ||
			    memcmp(&got, &back, sizeof(got)) != 0)
				sp_fail("a formatted CPU list does not parse back", s);
		}
		break;
	}
	default: {
		pid_t got = 0;
		long want = 0;
		int ok = sdp_uromd_pid_parse((const char *)data + 1, size - 1, &got);

		if (ok != ref_pid(data + 1, size - 1, &want) || (ok && got != (pid_t)want))
			sp_fail("sdp_uromd_pid_parse disagrees with the grammar", s);
		break;
	}
	}
	free(s);
	return 0;
}

#ifdef SDP_FUZZ_MAIN
#include "fuzz_main.h"

/* A parser byte, then text made of the pieces the grammars are built from. */
static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	static const char *const pieces[] = {"0",
					     "1",
					     "7",
					     "9",
					     "10",
					     "70",
					     "0x",
					     "0X1f",
					     "08",
					     "007",
					     "-",
					     ",",
					     " ",
					     "\t",
					     "\n",
					     "yes",
					     "No",
					     "TRUE",
					     "off",
					     "on",
					     "y",
					     "warn",
					     "Info",
					     "trace",
					     "disable",
					     "crit",
					     "1023",
					     "1024",
					     "4294967295",
					     "18446744073709551615",
					     "18446744073709551616",
					     "99999999999",
					     "2147483647",
					     "2147483648",
					     "x",
					     "+",
					     "\0"};
	size_t n = 1, k = fuzz_rnd() % 8;

	if (cap < 2)
		return 0;
	buf[0] = (uint8_t)(fuzz_rnd() % 5);
	for (size_t i = 0; i <= k; i++) {
		const char *p = pieces[fuzz_rnd() % (sizeof(pieces) / sizeof(pieces[0]))];
		size_t l = strlen(p);

		if (fuzz_rnd() % 16 == 0)
			buf[n < cap ? n++ : n - 1] = (uint8_t)fuzz_rnd();
		if (n + l > cap)
			break;
		memcpy(buf + n, p, l);
		n += l;
	}
	if (buf[0] == 4 && fuzz_rnd() % 2 == 0 && n < cap)
		buf[n++] = '\n';
	return n;
}
#endif /* SDP_FUZZ_MAIN */
