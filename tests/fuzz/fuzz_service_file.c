/*
 * libFuzzer target for the UROM service file (DOCA_UROM_SERVICE_FILE, read by
 * sdp_urom_service_file_lookup in src/urom/host/lookup.c) and the address parser it and
 * SOFTDPU_UROM_SERVICE_ADDR use (sdp_urom_hostport_parse).
 *
 * Input: byte 0 picks the host name and device PCI address looked up (from small tables, so that
 * generated and mutated lines can match); the rest is the file, written to a private temporary file
 * (in TMPDIR, else /dev/shm, else /tmp) and looked up. Properties checked beyond "no crash": the
 * lookup's verdict and address equal those of an independent reading of the file here (the first
 * line of exactly five blank-separated fields `app dpu dev pci nets` whose app names this host or
 * its short form, whose service is "dpu", whose PCI address equals the device's and whose dev and
 * nets are well-formed); on success the origin is "<path>:<line>". Every blank-separated word of
 * the file and the whole input (NUL-terminated) also go through sdp_urom_hostport_parse: an
 * accepted address has a host of 1..SDP_UROM_ADDR_HOST_MAX-1 characters without blanks and a port
 * in 1..65535, and one of its printed forms (host:port, [host]:port, host) parses back to the same
 * host and port.
 *
 * With -DSDP_FUZZ_MAIN this file has its own main() (tests/fuzz/fuzz_main.h): the replay test.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "doca_log.h"
#include "sdp_provider.h"
#include "sdp_urom_host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_DEFAULT_PORT 7777
/* Longer inputs are skipped (the reference reads a line into a buffer of this size). */
#define FUZZ_MAIN_LEN 65536

static const char *const fuzz_hosts[] = {"app1", "app1.example.com", "APP1.lab", "a"};
static const char *const fuzz_pcis[] = {"0000:03:00.0", "03:00.0", "ffff:ff:1f.7", "0001:0a:00.1"};

static void check_hostport(const char *s)
{
	char host[SDP_UROM_ADDR_HOST_MAX], back_host[SDP_UROM_ADDR_HOST_MAX];
	char form[SDP_UROM_ADDR_HOST_MAX + 16];
	uint16_t port = 0, back_port = 0;
	size_t n;
	int ok = 0;

	if (sdp_urom_hostport_parse(s, FUZZ_DEFAULT_PORT, host, sizeof(host), &port) !=
	    DOCA_SUCCESS)
		return;
	n = strlen(host);
	if (n == 0 || n >= sizeof(host) || port == 0)
		abort();
	for (size_t i = 0; i < n; i++)
		if (isspace((unsigned char)host[i]))
			abort();
	for (int f = 0; f < 3 && !ok; f++) {
		if (f == 0)
			snprintf(form, sizeof(form), "%s:%u", host, port);
		else if (f == 1)
			snprintf(form, sizeof(form), "[%s]:%u", host, port);
		else
			snprintf(form, sizeof(form), "%s", host);
		ok = sdp_urom_hostport_parse(form, FUZZ_DEFAULT_PORT, back_host, sizeof(back_host),
					     &back_port) == DOCA_SUCCESS &&
		     strcmp(back_host, host) == 0 && back_port == port;
	}
	if (!ok)
		abort(); /* an accepted address that no printed form gives back */
}

static int host_matches(const char *name, const char *hostname)
{
	size_t n = strlen(name);

	return strcasecmp(name, hostname) == 0 ||
	       (strncasecmp(name, hostname, n) == 0 && hostname[n] == '.');
}

/*
 * The independent reading: the line number of the first matching line (0: none) and its
 * address. Lines end at '\n'; a line's text ends at its first NUL; words are split by
 * space, tab and CR.
 */
static unsigned reference(const char *text, size_t len, const char *hostname, const char *want,
			  struct sdp_urom_addr *addr)
{
	unsigned lineno = 0;

	for (size_t pos = 0; pos < len;) {
		static char line[FUZZ_MAIN_LEN + 1];
		char *w[6], *p;
		size_t end = pos, n = 0, cut;

		while (end < len && text[end] != '\n')
			end++;
		lineno++;
		cut = strnlen(text + pos, end - pos);
		memcpy(line, text + pos, cut);
		line[cut] = '\0';
		pos = end + 1;
		for (p = line; *p != '\0' && n < 6;) {
			while (*p == ' ' || *p == '\t' || *p == '\r')
				*p++ = '\0';
			if (*p == '\0')
				break;
			w[n++] = p;
			while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\r')
				p++;
		}
		if (n == 0 || w[0][0] == '#' || n != 5 || strcmp(w[1], "dpu") != 0)
			continue;
		char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];

		if (sdp_pci_addr_normalize(w[3], pci) != DOCA_SUCCESS)
			continue;
		if (!host_matches(w[0], hostname) || strcasecmp(pci, want) != 0)
			continue;
		memset(addr, 0, sizeof(*addr));
		if (sdp_urom_hostport_parse(w[2], SDP_UROM_DEFAULT_PORT, addr->host,
					    sizeof(addr->host), &addr->port) != DOCA_SUCCESS)
			continue;
		if (strlen(w[4]) >= sizeof(addr->net_devices))
			continue;
		strcpy(addr->net_devices, w[4]);
		return lineno;
	}
	return 0;
}

static char path[256];
static int file_fd = -1;

/* The temporary file is this process's own (mkstemp): removed at exit. */
static void fuzz_unlink(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *hostname, *pci;
	struct sdp_urom_addr got, ref;
	char want[DOCA_DEVINFO_PCI_ADDR_SIZE], origin[320];
	doca_error_t st;
	unsigned line;
	char *text;

	if (path[0] == '\0') {
		const char *tmp = getenv("TMPDIR");

		(void)doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
		snprintf(path, sizeof(path), "%s/fuzz_service_file.XXXXXX",
			 tmp != NULL && *tmp != '\0'   ? tmp :
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" :
							 "/tmp");
		file_fd = mkstemp(path);
		if (file_fd < 0)
			abort();
		atexit(fuzz_unlink);
	}
	if (size < 1 || size > FUZZ_MAIN_LEN)
		return 0;
	hostname = fuzz_hosts[data[0] & 3];
	pci = fuzz_pcis[(data[0] >> 2) & 3];
	if (sdp_pci_addr_normalize(pci, want) != DOCA_SUCCESS)
		abort();

	/* Rewritten in place (no truncation to 0 first: ext4 would flush it at every close). */
	if ((size > 1 && pwrite(file_fd, data + 1, size - 1, 0) != (ssize_t)(size - 1)) ||
	    ftruncate(file_fd, (off_t)(size - 1)) != 0)
		abort();

	memset(&got, 0x5a, sizeof(got));
	st = sdp_urom_service_file_lookup(path, hostname, pci, &got);
	line = reference((const char *)data + 1, size - 1, hostname, want, &ref);
	if (line == 0) {
		if (st != DOCA_ERROR_NOT_FOUND)
			abort();
	} else {
		snprintf(origin, sizeof(origin), "%s:%u", path, line);
		if (st != DOCA_SUCCESS || strcmp(got.host, ref.host) != 0 || got.port != ref.port ||
		    strcmp(got.net_devices, ref.net_devices) != 0 ||
		    strcmp(got.origin, origin) != 0)
			abort();
	}

	/* Every word of the file, and the whole input, as an address. */
	text = malloc(size);
	if (text == NULL)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	check_hostport(text);
	for (char *save = NULL, *w = strtok_r(text, " \t\r\n", &save); w != NULL;
	     w = strtok_r(NULL, " \t\r\n", &save))
		check_hostport(w);
	free(text);
	return 0;
}

#ifdef SDP_FUZZ_MAIN
#include "fuzz_main.h"

static const char *const fuzz_words[] = {
	"app1",
	"APP1",
	"app1.example.com",
	"app",
	"a",
	"dpu",
	"gpu",
	"dpu1",
	"dpu1:9000",
	"[::1]:9000",
	"fe80::1",
	"[fe80::1]",
	"host:0",
	"host:65536",
	"h:080",
	"0000:03:00.0",
	"03:00.0",
	"3:0.0",
	"FFFF:FF:1F.7",
	"0001:0a:00.1",
	"mlx5_0:1",
	"mlx5_0:1,mlx5_1:1",
	"#",
	" ",
	"\t",
	"\r",
	"[",
	"]",
	":",
};

static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	size_t len = 1, lines = fuzz_rnd() % 6;

	buf[0] = (uint8_t)fuzz_rnd();
	for (size_t l = 0; l < lines; l++) {
		size_t words = fuzz_rnd() % 4 == 0 ? fuzz_rnd() % 8 : 5;

		for (size_t i = 0; i < words && len + 80 < cap; i++) {
			uint64_t r = fuzz_rnd();
			const char *w;

			/* mostly the right word in the right field, so lines match */
			if (words == 5 && r % 4 != 0)
				w = i == 0 ? fuzz_words[(r >> 8) % 5] :
				    i == 1 ? "dpu" :
				    i == 2 ? fuzz_words[7 + (r >> 8) % 9] :
				    i == 3 ? fuzz_words[16 + (r >> 8) % 4] :
					     fuzz_words[20 + (r >> 8) % 2];
			else
				w = fuzz_words[(r >> 8) %
					       (sizeof(fuzz_words) / sizeof(fuzz_words[0]))];
			if (r % 32 == 1)
				buf[len++] = (uint8_t)(r >> 16); /* a random byte */
			memcpy(buf + len, w, strlen(w));
			len += strlen(w);
			buf[len++] = r % 8 == 2 ? '\t' : ' ';
		}
		buf[len++] = '\n';
	}
	return len;
}

#endif
