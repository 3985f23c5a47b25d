/*
 * Numbers and counts of software NIC declarations (src/providers/nic_decl.c, nic_dev.c), through
 * the loop provider: numbers are decimal only ("08" is eight, "0x10" and "-1" are refused, a
 * number beyond 64 bits is out of range, too many digits then a letter are not a number), and a
 * provider declared with more devices than its synthetic bus holds lists the first
 * SDP_NIC_MAX_DEVICES with one warning for the rest.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "doca_dev.h"
#include "sdp_provider.h"
#include "t_helpers.h"
#include "t_nic.h"

#define BULK 300 /* loop devices declared after the number checks: 150 pairs */
#define LIMIT 256

/* How many captured records contain s. */
static int log_count(const char *s)
{
	int n = 0;

	for (const char *p = strstr(t_log, s); p != NULL; p = strstr(p + 1, s))
		n++;
	return n;
}

static int loop_devices(struct doca_devinfo **list, uint32_t n)
{
	int count = 0;

	for (uint32_t i = 0; i < n; i++)
		count += strcmp(sdp_devinfo_get_provider_name(list[i]), "loop") == 0;
	return count;
}

int main(void)
{
	static char decls[BULK * 48 + 1024];
	struct doca_devinfo **list = NULL;
	char name[64], line[128];
	int pid = (int)getpid();
	size_t len;
	uint32_t n = 0;

	len = (size_t)snprintf(decls, sizeof(decls),
			       "loop:name=da%d,peer=db%d,depth=08;"	/* 1: eight */
			       "loop:name=db%d,peer=da%d,depth=8;"	/* 2: agrees */
			       "loop:name=dhex%d,peer=da%d,depth=0x10;" /* 3 */
			       "loop:name=dbig%d,peer=da%d,depth=99999999999999999999;"	  /* 4 */
			       "loop:name=dneg%d,peer=da%d,depth=-1;"			  /* 5 */
			       "loop:name=dbigx%d,peer=da%d,depth=99999999999999999999x", /* 6 */
			       pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, pid);
	for (int i = 0; i < BULK; i++)
		len += (size_t)snprintf(decls + len, sizeof(decls) - len,
					";loop:name=p%d_%d,peer=p%d_%d", i, pid, i ^ 1, pid);
	T_TRUE(len < sizeof(decls));
	T_OK(t_nic_list(decls, &list, &n));
	if (list == NULL)
		T_DONE();

	/* decimal only: 08 is eight (not a bad octal number), so the pair agrees and is listed */
	snprintf(name, sizeof(name), "da%d", pid);
	T_TRUE(t_find_dev(list, n, name) != NULL);
	snprintf(name, sizeof(name), "db%d", pid);
	T_TRUE(t_find_dev(list, n, name) != NULL);
	T_LOGGED("SOFTDPU_DEVICES entry 3", "depth=0x10 is not a number", "decimal digits only");
	T_LOGGED("SOFTDPU_DEVICES entry 4", "depth=99999999999999999999 is not a number from 1 to");
	T_LOGGED("SOFTDPU_DEVICES entry 5", "depth=-1 is not a number", "decimal digits only");
	/* too many digits, then a letter: not a number (found by fuzz_dev_decl), not "too big" */
	T_LOGGED("SOFTDPU_DEVICES entry 6", "depth=99999999999999999999x is not a number",
		 "decimal digits only");
	snprintf(name, sizeof(name), "dhex%d", pid);
	T_TRUE(t_find_dev(list, n, name) == NULL);

	/*
	 * More devices than the bus holds: the first LIMIT declarations reaching the provider
	 * (2 of the number checks, then 254 of the bulk) are listed, the rest refused once.
	 */
	T_EQ_INT(loop_devices(list, n), LIMIT);
	snprintf(name, sizeof(name), "p%d_%d", LIMIT - 3, pid);
	T_TRUE(t_find_dev(list, n, name) != NULL);
	snprintf(name, sizeof(name), "p%d_%d", LIMIT - 2, pid);
	T_TRUE(t_find_dev(list, n, name) == NULL);
	snprintf(line, sizeof(line), "the %d after it are not listed", 2 + BULK - LIMIT - 1);
	T_LOGGED("SOFTDPU_DEVICES entry 261", "at most 256 devices", line);
	T_EQ_INT(log_count("at most 256 devices"), 1);
	T_OK(doca_devinfo_destroy_list(list));
	T_DONE();
}
