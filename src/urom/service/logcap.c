/*
 * softdpu-uromd: the cap on old worker logs (--max-worker-logs, default 64).
 *
 * Every worker writes <run dir>/worker-<id>-<pid>.log (spawn.c; worker-<id>-spawn<n>.log until
 * its pid is known, and for good when the rename failed). The file stays when the worker is gone,
 * for debugging; after each reaping and at start-up the oldest of them (by modification time)
 * are removed until at most max_worker_logs remain. Only files that prove the service wrote them
 * are candidates: regular files (not followed) of this user whose whole name has one of those
 * two forms; a live worker's log is never one. Anything else in the directory is left alone.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdp_log.h"
#include "uromd.h"

SDP_LOG_COMPONENT("uromd");

/* Entries looked at per pass at most (a run directory holds a handful of files otherwise). */
#define LOGCAP_SCAN_MAX 65536

struct logcap_entry {
	char name[96];
	struct timespec mtime;
};

/* 1 when s[0..) starts with 1..20 decimal digits; *end_p = the first character after them. */
static int logcap_digits(const char *s, const char **end_p)
{
	const char *p = s;

	while (*p >= '0' && *p <= '9' && p - s < 21)
		p++;
	if (p == s || p - s > 20)
		return 0;
	*end_p = p;
	return 1;
}

/* 1 for "worker-<digits>-<digits>.log" and "worker-<digits>-spawn<digits>.log". */
static int logcap_is_worker_log(const char *name)
{
	const char *p = name;

	if (strncmp(p, "worker-", 7) != 0 || !logcap_digits(p + 7, &p) || *p != '-')
		return 0;
	p++;
	if (strncmp(p, "spawn", 5) == 0)
		p += 5;
	if (!logcap_digits(p, &p))
		return 0;
	return strcmp(p, ".log") == 0;
}

static int logcap_is_live(const struct uromd *d, const char *name)
{
	for (const struct uromd_worker *w = d->workers; w != NULL; w = w->next) {
		const char *base = w->log_path != NULL ? strrchr(w->log_path, '/') : NULL;

		if (base != NULL && strcmp(base + 1, name) == 0)
			return 1;
	}
	return 0;
}

static int logcap_older(const void *a, const void *b)
{
	const struct logcap_entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

void uromd_worker_logs_prune(struct uromd *d)
{
	struct logcap_entry *ents = NULL;
	size_t num = 0, cap = 0, removed = 0;
	struct dirent *de;
	int dfd, scanned = 0;
	DIR *dir;

	dfd = open(d->run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		sdp_warn("worker logs: cannot open the run directory %s: %m", d->run_dir);
		return;
	}
	dir = fdopendir(dfd);
	if (dir == NULL) {
		sdp_warn("worker logs: cannot read the run directory %s: %m", d->run_dir);
		close(dfd);
		return;
	}
	while ((de = readdir(dir)) != NULL && scanned++ < LOGCAP_SCAN_MAX) {
		struct stat st;

		if (strlen(de->d_name) >= sizeof(ents[0].name) || !logcap_is_worker_log(de->d_name))
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid() || logcap_is_live(d, de->d_name))
			continue;
		if (num == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct logcap_entry *n = realloc(ents, ncap * sizeof(*ents));

			if (n == NULL) {
				sdp_warn("worker logs: out of memory; none removed this time");
				goto out;
			}
			ents = n;
			cap = ncap;
		}
		memcpy(ents[num].name, de->d_name, strlen(de->d_name) + 1);
		ents[num].mtime = st.st_mtim;
		num++;
	}
	if (num <= d->cfg.max_worker_logs)
		goto out;
	qsort(ents, num, sizeof(*ents), logcap_older);
	for (size_t i = 0; i + d->cfg.max_worker_logs < num; i++) {
		if (unlinkat(dfd, ents[i].name, 0) == 0)
			removed++;
		else if (errno != ENOENT)
			sdp_warn("worker logs: failed to remove %s/%s: %m", d->run_dir,
				 ents[i].name);
	}
	if (removed > 0)
		sdp_info("worker logs: removed the %zu oldest in %s (at most %u kept)", removed,
			 d->run_dir, d->cfg.max_worker_logs);
out:
	free(ents);
	closedir(dir);
}
