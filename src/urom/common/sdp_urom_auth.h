/*
 * softdpu internal: the service secret and the challenge-response handshake (libsodium).
 *
 * The service keeps a random 32-byte secret in a file of mode 0600, created on first start.
 * Host and service prove knowledge of it to each other without sending it:
 *   host  -> HELLO      client nonce Nc
 *   svc   -> CHALLENGE  server nonce Ns, HMAC-SHA256(secret, "svc"  | Nc | Ns)
 *   host  -> AUTH       HMAC-SHA256(secret, "host" | Ns | Nc)
 * Both MACs are compared in constant time. Worker access tokens are 32 random bytes issued by
 * the service per (worker, host connection) and handed to the worker over its control socket.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROM_AUTH_H_
#define SDP_UROM_AUTH_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"
#include "sdp_urom_proto.h"

#define SDP_UROM_SECRET_LEN 32

/*
 * The secret file path: SOFTDPU_UROM_SECRET_FILE, else $XDG_RUNTIME_DIR/softdpu/urom.secret,
 * else $HOME/.softdpu/urom.secret, else /tmp/softdpu-<uid>/urom.secret. Writes into buf.
 */
doca_error_t sdp_urom_secret_path(char *buf, size_t size);

/* Service side: read the secret, creating it (0600, directories 0700) when absent. */
doca_error_t sdp_urom_secret_load_or_create(const char *path, uint8_t secret[SDP_UROM_SECRET_LEN]);

/* Host side: read the secret; NOT_FOUND when the file is missing, NOT_PERMITTED when it is
 * readable by others (mode must be 0600 or stricter) or owned by someone else. */
doca_error_t sdp_urom_secret_load(const char *path, uint8_t secret[SDP_UROM_SECRET_LEN]);

/* Fill buf with random bytes (nonces, tokens). */
void sdp_urom_random(void *buf, size_t len);

/* mac = HMAC-SHA256(secret, label | a | b), a and b nonces. */
void sdp_urom_auth_mac(const uint8_t secret[SDP_UROM_SECRET_LEN], const char *label,
		       const uint8_t a[SDP_UROM_NONCE_LEN], const uint8_t b[SDP_UROM_NONCE_LEN],
		       uint8_t mac[SDP_UROM_MAC_LEN]);

/* Constant-time check of a received MAC; DOCA_ERROR_AUTHENTICATION on mismatch. */
doca_error_t sdp_urom_auth_verify(const uint8_t secret[SDP_UROM_SECRET_LEN], const char *label,
				  const uint8_t a[SDP_UROM_NONCE_LEN],
				  const uint8_t b[SDP_UROM_NONCE_LEN],
				  const uint8_t mac[SDP_UROM_MAC_LEN]);

/* Constant-time token comparison: nonzero when equal. */
int sdp_urom_token_equal(const uint8_t a[SDP_UROM_TOKEN_LEN], const uint8_t b[SDP_UROM_TOKEN_LEN]);

#endif /* SDP_UROM_AUTH_H_ */
