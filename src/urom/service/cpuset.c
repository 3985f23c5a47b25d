/*
 * softdpu-uromd: CPU lists ("0-7,9") as given on the command line, and set operations on the
 * wire representation (SDP_UROM_CPUSET_WORDS words of 64 CPUs).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_log.h"
#include "uromd.h"

SDP_LOG_COMPONENT("uromd");

static void cpuset_set(struct uromd_cpuset *set, unsigned long cpu)
{
	set->bits[cpu / 64] |= 1ULL << (cpu % 64);
}

static int cpuset_isset(const struct uromd_cpuset *set, unsigned long cpu)
{
	return (set->bits[cpu / 64] >> (cpu % 64)) & 1;
}

static int cpuset_read_cpu(const char **pp, unsigned long *cpu_p)
{
	const char *p = *pp;
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*p))
		return -1;
	v = strtoul(p, &end, 10);
	if (v >= UROMD_MAX_CPUS)
		return -1;
	*cpu_p = v;
	*pp = end;
	return 0;
}

doca_error_t uromd_cpuset_parse(const char *str, struct uromd_cpuset *set_p)
{
	struct uromd_cpuset set;
	const char *p = str, *tok = str;
	unsigned long lo, hi;

	if (str == NULL || set_p == NULL || *str == '\0') {
		sdp_error("empty CPU list");
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(&set, 0, sizeof(set));
	for (;;) {
		tok = p;
		if (cpuset_read_cpu(&p, &lo) != 0)
			goto err_bad;
		hi = lo;
		if (*p == '-') {
			p++;
			if (cpuset_read_cpu(&p, &hi) != 0 || hi < lo)
				goto err_bad;
		}
		for (unsigned long c = lo; c <= hi; c++)
			cpuset_set(&set, c);
		if (*p == '\0')
			break;
		if (*p != ',')
			goto err_bad;
		p++;
	}
	*set_p = set;
	return DOCA_SUCCESS;

err_bad:
	sdp_error("cpuset \"%s\": expected a list of CPUs and ascending ranges below %d like "
		  "0-7,9, bad at \"%s\"",
		  str, UROMD_MAX_CPUS, tok);
	return DOCA_ERROR_INVALID_VALUE;
}

void uromd_cpuset_format(const struct uromd_cpuset *set, char *buf, size_t size)
{
	size_t used = 0;
	unsigned long c = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	while (c < UROMD_MAX_CPUS) {
		unsigned long lo, hi;
		int n;

		if (!cpuset_isset(set, c)) {
			c++;
			continue;
		}
		lo = c;
		while (c + 1 < UROMD_MAX_CPUS && cpuset_isset(set, c + 1))
			c++;
		hi = c++;
		if (lo == hi)
			n = snprintf(buf + used, size - used, "%s%lu", used ? "," : "", lo);
		else
			n = snprintf(buf + used, size - used, "%s%lu-%lu", used ? "," : "", lo, hi);
		if (n < 0 || (size_t)n >= size - used) {
			buf[used] = '\0'; /* keep whole entries only */
			return;
		}
		used += (size_t)n;
	}
}

int uromd_cpuset_is_subset(const struct uromd_cpuset *a, const struct uromd_cpuset *b)
{
	for (int i = 0; i < SDP_UROM_CPUSET_WORDS; i++)
		if (a->bits[i] & ~b->bits[i])
			return 0;
	return 1;
}

int uromd_cpuset_empty(const struct uromd_cpuset *set)
{
	for (int i = 0; i < SDP_UROM_CPUSET_WORDS; i++)
		if (set->bits[i])
			return 0;
	return 1;
}

void uromd_cpuset_and(const struct uromd_cpuset *a, const struct uromd_cpuset *b,
		      struct uromd_cpuset *out)
{
	for (int i = 0; i < SDP_UROM_CPUSET_WORDS; i++)
		out->bits[i] = a->bits[i] & b->bits[i];
}
