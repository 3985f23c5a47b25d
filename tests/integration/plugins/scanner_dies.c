/*
 * Discovery fixture: kills the plugin scanner *between* two files, not while one is loading.
 * When SDP_TEST_SCANNER_DIES=<index> is set, its constructor (run inside the scanner child's
 * dlopen) writes a complete "skipped" outcome record for candidate <index> on the scanner's
 * pipe, which closes the open "trying" record, then dies with SIGKILL. The service must restart
 * the scanner from the first file without an outcome; when <index> is not this file's own, no
 * restart makes progress and the service must give up after a bounded number of them.
 * Without the variable it does nothing (and is skipped for its missing entry points).
 * The record layout copies struct scan_rec of src/urom/service/scan.c: keep them in step.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fixture_scan_rec {
	uint32_t index;
	uint32_t kind; /* 3: skipped */
	uint64_t version;
	char reason[240];
};

/* True when the parent (the service) holds inode ino as a read-only pipe end. */
static int fixture_parent_reads(ino_t ino)
{
	char dir[64], want[64], path[512], link[64], line[128];
	struct dirent *de;
	int found = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)getppid());
	snprintf(want, sizeof(want), "pipe:[%lu]", (unsigned long)ino);
	dp = opendir(dir);
	if (dp == NULL)
		return 0;
	while (!found && (de = readdir(dp)) != NULL) {
		ssize_t n;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, want) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)getppid(), de->d_name);
		f = fopen(path, "re");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "flags:", 6) == 0 &&
			    (strtoul(line + 6, NULL, 8) & 3) == 0)
				found = 1;
		fclose(f);
	}
	closedir(dp);
	return found;
}

__attribute__((constructor)) static void scanner_dies(void)
{
	const char *env = getenv("SDP_TEST_SCANNER_DIES");
	struct fixture_scan_rec rec;
	struct stat st;

	if (env == NULL || *env == '\0')
		return;
	memset(&rec, 0, sizeof(rec));
	rec.index = (uint32_t)strtoul(env, NULL, 10);
	rec.kind = 3;
	snprintf(rec.reason, sizeof(rec.reason),
		 "test fixture: reported this outcome, then killed the scanner");
	/* The scanner's pipe: a write-only FIFO here whose read end the service holds. */
	for (int fd = 3; fd < 1024; fd++) {
		int fl = fcntl(fd, F_GETFL);

		if (fl < 0 || (fl & O_ACCMODE) != O_WRONLY || fstat(fd, &st) != 0 ||
		    !S_ISFIFO(st.st_mode) || !fixture_parent_reads(st.st_ino))
			continue;
		if (write(fd, &rec, sizeof(rec)) != (ssize_t)sizeof(rec))
			break;
		raise(SIGKILL);
	}
	fprintf(stderr, "scanner_dies fixture: no scanner pipe found\n");
	_exit(99);
}
