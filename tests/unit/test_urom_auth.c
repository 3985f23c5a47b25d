/*
 * Unit test: the UROM secret and handshake helpers. A secret is created 0600 (directories
 * 0700) in a unique temporary directory and reloads identical; a second load_or_create keeps
 * it; a file others may read, a file of the wrong size, a missing file and a symlink are
 * refused; the MACs verify with the right secret, label and nonce order only; tokens compare
 * in constant time; the default path follows SOFTDPU_UROM_SECRET_FILE, XDG_RUNTIME_DIR, HOME.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doca_log.h"
#include "sdp_urom_auth.h"
#include "t_helpers.h"

static char dir[PATH_MAX];

static void path_in(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

static int mode_of(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -1;
	return (int)(st.st_mode & 07777);
}

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		t_fail("cannot write %s", path);
	if (fd >= 0) {
		fchmod(fd, mode);
		close(fd);
	}
}

static void test_secret_file(void)
{
	uint8_t s1[SDP_UROM_SECRET_LEN], s2[SDP_UROM_SECRET_LEN], zero[SDP_UROM_SECRET_LEN];
	uint8_t keep[SDP_UROM_SECRET_LEN];
	char path[PATH_MAX + 128], sub[PATH_MAX + 64], other[PATH_MAX + 64];

	memset(zero, 0, sizeof(zero));
	/* Created with its missing parent directories. */
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	snprintf(path, sizeof(path), "%s/urom.secret", sub);
	T_OK(sdp_urom_secret_load_or_create(path, s1));
	T_EQ_INT(mode_of(path), 0600);
	T_EQ_INT(mode_of(sub), 0700);
	T_TRUE(memcmp(s1, zero, sizeof(zero)) != 0);

	/* Reloaded identical, by both loaders. */
	T_OK(sdp_urom_secret_load(path, s2));
	T_TRUE(memcmp(s1, s2, sizeof(s1)) == 0);
	memset(s2, 0, sizeof(s2));
	T_OK(sdp_urom_secret_load_or_create(path, s2));
	T_TRUE(memcmp(s1, s2, sizeof(s1)) == 0);

	/* A second fresh secret differs. */
	path_in(other, sizeof(other), "other.secret");
	T_OK(sdp_urom_secret_load_or_create(other, s2));
	T_TRUE(memcmp(s1, s2, sizeof(s1)) != 0);

	/* Readable by the group or others: refused, output untouched. */
	memcpy(keep, s2, sizeof(keep));
	T_TRUE(chmod(path, 0640) == 0);
	T_STATUS(sdp_urom_secret_load(path, s2), DOCA_ERROR_NOT_PERMITTED);
	T_STATUS(sdp_urom_secret_load_or_create(path, s2), DOCA_ERROR_NOT_PERMITTED);
	T_TRUE(chmod(path, 0604) == 0);
	T_STATUS(sdp_urom_secret_load(path, s2), DOCA_ERROR_NOT_PERMITTED);
	T_TRUE(memcmp(s2, keep, sizeof(keep)) == 0);
	/* Stricter than 0600 is fine. */
	T_TRUE(chmod(path, 0400) == 0);
	T_OK(sdp_urom_secret_load(path, s2));
	T_TRUE(memcmp(s1, s2, sizeof(s1)) == 0);
	T_TRUE(chmod(path, 0600) == 0);

	/* Missing. */
	path_in(other, sizeof(other), "missing.secret");
	T_STATUS(sdp_urom_secret_load(other, s2), DOCA_ERROR_NOT_FOUND);

	/* Wrong size. */
	path_in(other, sizeof(other), "short.secret");
	write_file(other, "short", 5, 0600);
	T_STATUS(sdp_urom_secret_load(other, s2), DOCA_ERROR_INVALID_VALUE);
	path_in(other, sizeof(other), "long.secret");
	{
		uint8_t big[SDP_UROM_SECRET_LEN + 1];

		memset(big, 7, sizeof(big));
		write_file(other, big, sizeof(big), 0600);
	}
	T_STATUS(sdp_urom_secret_load(other, s2), DOCA_ERROR_INVALID_VALUE);

	/* A symlink is not followed; a directory is not a secret. */
	path_in(other, sizeof(other), "link.secret");
	T_TRUE(symlink(path, other) == 0);
	T_STATUS(sdp_urom_secret_load(other, s2), DOCA_ERROR_NOT_PERMITTED);
	unlink(other);
	T_STATUS(sdp_urom_secret_load(sub, s2), DOCA_ERROR_NOT_PERMITTED);

	/* Arguments. */
	T_STATUS(sdp_urom_secret_load(NULL, s2), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_secret_load("", s2), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_secret_load(path, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_secret_load_or_create(NULL, s2), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_secret_load_or_create(path, NULL), DOCA_ERROR_INVALID_VALUE);
}

static void test_mac(void)
{
	uint8_t secret[SDP_UROM_SECRET_LEN], wrong[SDP_UROM_SECRET_LEN];
	uint8_t nc[SDP_UROM_NONCE_LEN], ns[SDP_UROM_NONCE_LEN];
	uint8_t mac[SDP_UROM_MAC_LEN], mac2[SDP_UROM_MAC_LEN], bad[SDP_UROM_MAC_LEN];
	int i;

	sdp_urom_random(secret, sizeof(secret));
	memcpy(wrong, secret, sizeof(wrong));
	wrong[5] ^= 0x40;
	sdp_urom_random(nc, sizeof(nc));
	sdp_urom_random(ns, sizeof(ns));
	T_TRUE(memcmp(nc, ns, sizeof(nc)) != 0);

	/* Service proves itself, host proves itself. */
	sdp_urom_auth_mac(secret, "svc", nc, ns, mac);
	T_OK(sdp_urom_auth_verify(secret, "svc", nc, ns, mac));
	sdp_urom_auth_mac(secret, "svc", nc, ns, mac2);
	T_TRUE(memcmp(mac, mac2, sizeof(mac)) == 0); /* deterministic */
	sdp_urom_auth_mac(secret, "host", ns, nc, mac2);
	T_OK(sdp_urom_auth_verify(secret, "host", ns, nc, mac2));
	T_TRUE(memcmp(mac, mac2, sizeof(mac)) != 0);

	/* Wrong secret, wrong label, swapped nonces, any flipped bit: AUTHENTICATION. */
	T_STATUS(sdp_urom_auth_verify(wrong, "svc", nc, ns, mac), DOCA_ERROR_AUTHENTICATION);
	T_STATUS(sdp_urom_auth_verify(secret, "host", nc, ns, mac), DOCA_ERROR_AUTHENTICATION);
	T_STATUS(sdp_urom_auth_verify(secret, "svc", ns, nc, mac), DOCA_ERROR_AUTHENTICATION);
	for (i = 0; i < SDP_UROM_MAC_LEN * 8; i += 37) {
		memcpy(bad, mac, sizeof(bad));
		bad[i / 8] ^= (uint8_t)(1u << (i % 8));
		T_STATUS(sdp_urom_auth_verify(secret, "svc", nc, ns, bad),
			 DOCA_ERROR_AUTHENTICATION);
	}
	/* A MAC of zeros (an all-zero secret would be a bug, never a match). */
	memset(bad, 0, sizeof(bad));
	T_STATUS(sdp_urom_auth_verify(secret, "svc", nc, ns, bad), DOCA_ERROR_AUTHENTICATION);

	/* Arguments. */
	T_STATUS(sdp_urom_auth_verify(NULL, "svc", nc, ns, mac), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_auth_verify(secret, NULL, nc, ns, mac), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_auth_verify(secret, "svc", NULL, ns, mac), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_auth_verify(secret, "svc", nc, NULL, mac), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_auth_verify(secret, "svc", nc, ns, NULL), DOCA_ERROR_INVALID_VALUE);

	/* A known HMAC-SHA256 value pins the construction: key 0x00..0x1f, "svc\0" | 32x0x11 |
	 * 32x0x22 (computed independently with Python's hmac module). */
	{
		static const uint8_t want[SDP_UROM_MAC_LEN] = {
			0xc7, 0x64, 0xd2, 0xf4, 0x18, 0x14, 0x36, 0xde, 0x5d, 0x3f, 0xfc,
			0x32, 0x6f, 0xe9, 0x38, 0x23, 0x17, 0xba, 0xf9, 0x25, 0x38, 0x8d,
			0x32, 0xa5, 0xbf, 0x04, 0x0c, 0x57, 0xcc, 0x24, 0x57, 0x48};

		for (i = 0; i < SDP_UROM_SECRET_LEN; i++)
			secret[i] = (uint8_t)i;
		memset(nc, 0x11, sizeof(nc));
		memset(ns, 0x22, sizeof(ns));
		sdp_urom_auth_mac(secret, "svc", nc, ns, mac);
		if (memcmp(mac, want, sizeof(want)) != 0) {
			char hex[2 * SDP_UROM_MAC_LEN + 1];

			for (i = 0; i < SDP_UROM_MAC_LEN; i++)
				snprintf(hex + 2 * i, 3, "%02x", mac[i]);
			t_fail("HMAC of the known vector: got %s", hex);
		}
	}
}

static void test_tokens(void)
{
	uint8_t a[SDP_UROM_TOKEN_LEN], b[SDP_UROM_TOKEN_LEN];

	sdp_urom_random(a, sizeof(a));
	memcpy(b, a, sizeof(b));
	T_TRUE(sdp_urom_token_equal(a, b));
	b[SDP_UROM_TOKEN_LEN - 1] ^= 1;
	T_TRUE(!sdp_urom_token_equal(a, b));
	b[SDP_UROM_TOKEN_LEN - 1] ^= 1;
	b[0] ^= 0x80;
	T_TRUE(!sdp_urom_token_equal(a, b));
	T_TRUE(!sdp_urom_token_equal(a, NULL));
	T_TRUE(!sdp_urom_token_equal(NULL, b));
	/* Two fresh tokens differ. */
	sdp_urom_random(b, sizeof(b));
	T_TRUE(!sdp_urom_token_equal(a, b));
	sdp_urom_random(NULL, 8); /* ignored */
}

static void test_default_path(void)
{
	char buf[PATH_MAX], want[PATH_MAX + 64];

	setenv("SOFTDPU_UROM_SECRET_FILE", "/some/where/s.key", 1);
	T_OK(sdp_urom_secret_path(buf, sizeof(buf)));
	T_EQ_STR(buf, "/some/where/s.key");
	T_STATUS(sdp_urom_secret_path(buf, 5), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_secret_path(NULL, 5), DOCA_ERROR_INVALID_VALUE);

	unsetenv("SOFTDPU_UROM_SECRET_FILE");
	setenv("XDG_RUNTIME_DIR", "/run/user/4242", 1);
	T_OK(sdp_urom_secret_path(buf, sizeof(buf)));
	T_EQ_STR(buf, "/run/user/4242/softdpu/urom.secret");

	unsetenv("XDG_RUNTIME_DIR");
	setenv("HOME", "/home/someone", 1);
	T_OK(sdp_urom_secret_path(buf, sizeof(buf)));
	T_EQ_STR(buf, "/home/someone/.softdpu/urom.secret");

	unsetenv("HOME");
	T_OK(sdp_urom_secret_path(buf, sizeof(buf)));
	snprintf(want, sizeof(want), "/tmp/softdpu-%u/urom.secret", (unsigned int)getuid());
	T_EQ_STR(buf, want);
}

static void cleanup(const char *d)
{
	char cmd[PATH_MAX + 32];

	/* Only our own mkdtemp directory. */
	if (strncmp(d, "/tmp/test_urom_auth.", 20) == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", d);
	}
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_urom_auth.XXXXXX");
	if (mkdtemp(dir) == NULL) {
		fprintf(stderr, "mkdtemp failed\n");
		return T_EXIT_FAIL;
	}
	/* Refusals are logged by the functions under test; keep the output for failures only. */
	T_OK(doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_CRIT));
	test_secret_file();
	test_mac();
	test_tokens();
	test_default_path();
	cleanup(dir);
	T_DONE();
}
