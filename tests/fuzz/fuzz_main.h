/*
 * The replay driver of the text-input fuzz targets (fuzz_dev_decl, fuzz_service_file,
 * fuzz_argp_json, fuzz_flow_classify): included by a target built with -DSDP_FUZZ_MAIN, it gives
 * that target a main() that runs LLVMFuzzerTestOneInput, with any compiler (the `fuzz` suite),
 * on the files and directories (a committed corpus) named on its command line, then on N inputs
 * made by the target's generator fuzz_generate() (seeded, so reproducible).
 *
 *   <target>_replay [--random N] [--seed S] [FILE|DIR...]
 *
 * The target defines, after including this file:
 *   static size_t fuzz_generate(uint8_t *buf, size_t cap);  (one input of at most cap bytes)
 * and may use fuzz_rnd() (xorshift64) in it. A target may also define FUZZ_MAIN_DONE(n) before
 * including this file: called after the n generated inputs, nonzero fails the replay (e.g. the
 * generator did not reach every kind of input it should). Every input is handed over as an
 * exact-size heap copy, so a sanitizer sees a read past its end.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_FUZZ_MAIN_H_
#define SDP_FUZZ_MAIN_H_

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FUZZ_MAIN_MAX_INPUT (1u << 16)

static uint64_t fuzz_rng = 1;

static uint64_t fuzz_rnd(void)
{
	fuzz_rng ^= fuzz_rng << 13;
	fuzz_rng ^= fuzz_rng >> 7;
	fuzz_rng ^= fuzz_rng << 17;
	return fuzz_rng;
}

static size_t fuzz_generate(uint8_t *buf, size_t cap);

static void fuzz_main_run(const uint8_t *data, size_t len)
{
	uint8_t *copy = malloc(len > 0 ? len : 1);

	if (copy == NULL) {
		fprintf(stderr, "replay: out of memory\n");
		exit(1);
	}
	memcpy(copy, data, len);
	LLVMFuzzerTestOneInput(copy, len);
	free(copy);
}

static int fuzz_main_file(const char *path, unsigned long *files)
{
	static uint8_t buf[FUZZ_MAIN_MAX_INPUT];
	struct stat st;
	size_t len;
	FILE *f;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *e;
		int bad = 0;

		if (d == NULL) {
			perror(path);
			return 1;
		}
		while ((e = readdir(d)) != NULL) {
			char sub[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			bad |= fuzz_main_file(sub, files);
		}
		closedir(d);
		return bad;
	}
	f = fopen(path, "rb");
	if (f == NULL) {
		perror(path);
		return 1;
	}
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	fuzz_main_run(buf, len);
	(*files)++;
	return 0;
}

int main(int argc, char **argv)
{
	static uint8_t buf[FUZZ_MAIN_MAX_INPUT];
	unsigned long n = 0, files = 0;
	uint64_t seed = 0x5eedf00dULL;
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--random") == 0 && i + 1 < argc) {
			n = strtoul(argv[++i], NULL, 0);
		} else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: %s [--random N] [--seed S] [FILE|DIR...]\n",
				argv[0]);
			return 2;
		} else {
			bad |= fuzz_main_file(argv[i], &files);
		}
	}
	fuzz_rng = seed ? seed : 1;
	for (unsigned long i = 0; i < n; i++) {
		size_t len = fuzz_generate(buf, sizeof(buf));

		fuzz_main_run(buf, len);
	}
#ifdef FUZZ_MAIN_DONE
	bad |= FUZZ_MAIN_DONE(n);
#endif
	printf("replay: %lu files, %lu generated inputs (seed 0x%llx): no failure\n", files, n,
	       (unsigned long long)seed);
	return bad;
}

#endif /* SDP_FUZZ_MAIN_H_ */
