/*
 * softdpu: the UROM service secret and the challenge-response MACs (libsodium's HMAC-SHA256 and
 * random generator; see sdp_urom_auth.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_urom_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "sdp_config.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("urom_auth");

static pthread_once_t sdp_sodium_once = PTHREAD_ONCE_INIT;
static int sdp_sodium_status;

static void sodium_init_once(void)
{
	sdp_sodium_status = sodium_init();
}

/* sodium_init() is safe to call repeatedly, but once is enough; -1 means unusable. */
static int sodium_ready(void)
{
	pthread_once(&sdp_sodium_once, sodium_init_once);
	if (sdp_sodium_status < 0) {
		sdp_crit("libsodium failed to initialise");
		return 0;
	}
	return 1;
}

static doca_error_t errno_to_doca(int err)
{
	switch (err) {
	case ENOENT:
		return DOCA_ERROR_NOT_FOUND;
	case EPERM:
	case EACCES:
		return DOCA_ERROR_NOT_PERMITTED;
	case ENOMEM:
		return DOCA_ERROR_NO_MEMORY;
	case EIO:
		return DOCA_ERROR_IO_FAILED;
	default:
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
}

doca_error_t sdp_urom_secret_path(char *buf, size_t size)
{
	const char *env, *base;
	int n;

	if (buf == NULL || size == 0) {
		sdp_error("invalid argument: buf %p, size %zu", (void *)buf, size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	env = sdp_config_get_string(SDP_CFG_UROM_SECRET_FILE);
	if (env != NULL && env[0] != '\0') {
		n = snprintf(buf, size, "%s", env);
	} else if ((base = getenv("XDG_RUNTIME_DIR")) != NULL && base[0] == '/') {
		n = snprintf(buf, size, "%s/softdpu/urom.secret", base);
	} else if ((base = getenv("HOME")) != NULL && base[0] == '/') {
		n = snprintf(buf, size, "%s/.softdpu/urom.secret", base);
	} else {
		n = snprintf(buf, size, "/tmp/softdpu-%u/urom.secret", (unsigned int)getuid());
	}
	if (n < 0 || (size_t)n >= size) {
		sdp_error("secret file path does not fit in %zu bytes", size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* Check an opened secret file: a regular file of ours, nobody else may read or write it. */
static doca_error_t secret_check_fd(const char *path, int fd)
{
	struct stat st;

	if (fstat(fd, &st) != 0) {
		sdp_error("cannot stat secret file %s: %m", path);
		return errno_to_doca(errno);
	}
	if (!S_ISREG(st.st_mode)) {
		sdp_error("secret file %s is not a regular file", path);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (st.st_uid != geteuid()) {
		sdp_error("secret file %s is owned by uid %u, not by this user (uid %u)", path,
			  (unsigned int)st.st_uid, (unsigned int)geteuid());
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if ((st.st_mode & 077) != 0) {
		sdp_error("secret file %s has mode %04o: others may access it (chmod 600 it)", path,
			  (unsigned int)(st.st_mode & 07777));
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (st.st_size != SDP_UROM_SECRET_LEN) {
		sdp_error("secret file %s holds %lld bytes, expected %d", path,
			  (long long)st.st_size, SDP_UROM_SECRET_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t secret_read_fd(const char *path, int fd, uint8_t *secret)
{
	size_t got = 0;
	ssize_t n;

	while (got < SDP_UROM_SECRET_LEN) {
		n = read(fd, secret + got, SDP_UROM_SECRET_LEN - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sdp_error("cannot read secret file %s: %m", path);
			return DOCA_ERROR_IO_FAILED;
		}
		if (n == 0) {
			sdp_error("secret file %s is shorter than %d bytes", path,
				  SDP_UROM_SECRET_LEN);
			return DOCA_ERROR_INVALID_VALUE;
		}
		got += (size_t)n;
	}
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_secret_load(const char *path, uint8_t secret[SDP_UROM_SECRET_LEN])
{
	uint8_t buf[SDP_UROM_SECRET_LEN];
	doca_error_t status;
	int fd;

	if (path == NULL || path[0] == '\0' || secret == NULL) {
		sdp_error("invalid argument: path %s, secret %p", path != NULL ? path : "NULL",
			  (void *)secret);
		return DOCA_ERROR_INVALID_VALUE;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		int err = errno;

		if (err == ENOENT)
			sdp_error("secret file %s does not exist (is softdpu-uromd running as this "
				  "user? set SOFTDPU_UROM_SECRET_FILE to its secret file)",
				  path);
		else
			sdp_error("cannot open secret file %s: %s", path, strerror(err));
		return err == ELOOP ? DOCA_ERROR_NOT_PERMITTED : errno_to_doca(err);
	}
	status = secret_check_fd(path, fd);
	if (status == DOCA_SUCCESS)
		status = secret_read_fd(path, fd, buf);
	close(fd);
	if (status == DOCA_SUCCESS)
		memcpy(secret, buf, SDP_UROM_SECRET_LEN);
	sodium_memzero(buf, sizeof(buf));
	return status;
}

/* mkdir -p the parent directories of path with mode 0700 (existing ones are left alone). */
static doca_error_t secret_mkdirs(const char *path)
{
	char dir[PATH_MAX];
	size_t len = strlen(path);
	char *p;

	if (len >= sizeof(dir)) {
		sdp_error("secret file path %s is too long", path);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(dir, path, len + 1);
	p = strrchr(dir, '/');
	if (p == NULL || p == dir)
		return DOCA_SUCCESS;
	*p = '\0';
	for (p = dir + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
			sdp_error("cannot create directory %s: %m", dir);
			return errno_to_doca(errno);
		}
		*p = '/';
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		sdp_error("cannot create directory %s: %m", dir);
		return errno_to_doca(errno);
	}
	return DOCA_SUCCESS;
}

/* Write a fresh secret to a temporary file next to path and link it in place (no overwrite). */
static doca_error_t secret_create(const char *path, uint8_t *secret)
{
	char tmp[PATH_MAX];
	uint8_t buf[SDP_UROM_SECRET_LEN];
	doca_error_t status;
	size_t done = 0;
	ssize_t n;
	int fd, len;

	len = snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	if (len < 0 || (size_t)len >= sizeof(tmp)) {
		sdp_error("secret file path %s is too long", path);
		return DOCA_ERROR_INVALID_VALUE;
	}
	fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
	if (fd < 0) {
		sdp_error("cannot create a temporary secret file %s: %m", tmp);
		return errno_to_doca(errno);
	}
	if (fchmod(fd, 0600) != 0) {
		sdp_error("cannot chmod %s: %m", tmp);
		status = errno_to_doca(errno);
		goto err_unlink;
	}
	randombytes_buf(buf, sizeof(buf));
	while (done < sizeof(buf)) {
		n = write(fd, buf + done, sizeof(buf) - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			sdp_error("cannot write secret file %s: %m", tmp);
			status = DOCA_ERROR_IO_FAILED;
			goto err_unlink;
		}
		done += (size_t)n;
	}
	if (fsync(fd) != 0) {
		sdp_error("cannot sync secret file %s: %m", tmp);
		status = DOCA_ERROR_IO_FAILED;
		goto err_unlink;
	}
	/* link() fails with EEXIST when another process created the secret meanwhile. */
	if (link(tmp, path) != 0) {
		if (errno == EEXIST) {
			status = DOCA_ERROR_AGAIN;
		} else {
			sdp_error("cannot create secret file %s: %m", path);
			status = errno_to_doca(errno);
		}
		goto err_unlink;
	}
	unlink(tmp);
	close(fd);
	memcpy(secret, buf, sizeof(buf));
	sodium_memzero(buf, sizeof(buf));
	sdp_info("created UROM service secret %s", path);
	return DOCA_SUCCESS;

err_unlink:
	unlink(tmp);
	close(fd);
	sodium_memzero(buf, sizeof(buf));
	return status;
}

doca_error_t sdp_urom_secret_load_or_create(const char *path, uint8_t secret[SDP_UROM_SECRET_LEN])
{
	doca_error_t status;
	int attempt;

	if (path == NULL || path[0] == '\0' || secret == NULL) {
		sdp_error("invalid argument: path %s, secret %p", path != NULL ? path : "NULL",
			  (void *)secret);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!sodium_ready())
		return DOCA_ERROR_INITIALIZATION;
	for (attempt = 0; attempt < 2; attempt++) {
		if (access(path, F_OK) == 0 || errno != ENOENT)
			return sdp_urom_secret_load(path, secret);
		status = secret_mkdirs(path);
		if (status != DOCA_SUCCESS)
			return status;
		status = secret_create(path, secret);
		if (status != DOCA_ERROR_AGAIN)
			return status;
		/* Lost a race with another creator: read theirs. */
	}
	return sdp_urom_secret_load(path, secret);
}

void sdp_urom_random(void *buf, size_t len)
{
	if (buf == NULL || len == 0)
		return;
	if (!sodium_ready()) {
		/* Never hand out predictable bytes: a broken CSPRNG is fatal for security. */
		abort();
	}
	randombytes_buf(buf, len);
}

void sdp_urom_auth_mac(const uint8_t secret[SDP_UROM_SECRET_LEN], const char *label,
		       const uint8_t a[SDP_UROM_NONCE_LEN], const uint8_t b[SDP_UROM_NONCE_LEN],
		       uint8_t mac[SDP_UROM_MAC_LEN])
{
	crypto_auth_hmacsha256_state st;
	const char *l = label != NULL ? label : "";

	_Static_assert(SDP_UROM_MAC_LEN == crypto_auth_hmacsha256_BYTES, "MAC size");
	if (secret == NULL || a == NULL || b == NULL || mac == NULL)
		return;
	/* The label's NUL is part of the MAC input so "ab"|x and "a"|"b"x differ. */
	crypto_auth_hmacsha256_init(&st, secret, SDP_UROM_SECRET_LEN);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)l, strlen(l) + 1);
	crypto_auth_hmacsha256_update(&st, a, SDP_UROM_NONCE_LEN);
	crypto_auth_hmacsha256_update(&st, b, SDP_UROM_NONCE_LEN);
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(&st, sizeof(st));
}

doca_error_t sdp_urom_auth_verify(const uint8_t secret[SDP_UROM_SECRET_LEN], const char *label,
				  const uint8_t a[SDP_UROM_NONCE_LEN],
				  const uint8_t b[SDP_UROM_NONCE_LEN],
				  const uint8_t mac[SDP_UROM_MAC_LEN])
{
	uint8_t want[SDP_UROM_MAC_LEN];
	int equal;

	if (secret == NULL || label == NULL || a == NULL || b == NULL || mac == NULL) {
		sdp_error("invalid argument: secret %p, label %p, a %p, b %p, mac %p",
			  (const void *)secret, (const void *)label, (const void *)a,
			  (const void *)b, (const void *)mac);
		return DOCA_ERROR_INVALID_VALUE;
	}
	sdp_urom_auth_mac(secret, label, a, b, want);
	equal = sodium_memcmp(want, mac, SDP_UROM_MAC_LEN) == 0;
	sodium_memzero(want, sizeof(want));
	if (!equal) {
		sdp_error("authentication failed: the peer's %s MAC does not match this secret",
			  label);
		return DOCA_ERROR_AUTHENTICATION;
	}
	return DOCA_SUCCESS;
}

int sdp_urom_token_equal(const uint8_t a[SDP_UROM_TOKEN_LEN], const uint8_t b[SDP_UROM_TOKEN_LEN])
{
	if (a == NULL || b == NULL)
		return 0;
	return sodium_memcmp(a, b, SDP_UROM_TOKEN_LEN) == 0;
}
