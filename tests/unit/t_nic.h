/*
 * Helpers the software NIC backend tests share: capture softdpu's warnings, find devices, open
 * them and reach their Ethernet port ops.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef T_NIC_H_
#define T_NIC_H_

#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doca_dev.h"
#include "doca_log.h"
#include "sdp_provider.h"
#include "softdpu/sdp_pkt.h"
#include "t_helpers.h"
#include "t_log_capture.h"

/* The captured log must hold a record containing all of the given pieces (NULL-terminated). */
#define T_LOGGED(...) t_logged(__FILE__, __LINE__, (const char *const[]){__VA_ARGS__, NULL})
static __attribute__((unused)) void t_logged(const char *file, int line, const char *const *parts)
{
	const char *rec = t_log;

	while (*rec != '\0') {
		const char *end = strchr(rec, '\n');
		size_t len = end ? (size_t)(end - rec) : strlen(rec);
		int all = 1;

		for (const char *const *p = parts; *p != NULL && all; p++) {
			const char *hit = strstr(rec, *p);

			all = hit != NULL && hit < rec + len;
		}
		if (all)
			return;
		rec += len + (end != NULL);
	}
	fprintf(stderr, "FAIL %s:%d: expected a log record containing", file, line);
	for (const char *const *p = parts; *p != NULL; p++)
		fprintf(stderr, " \"%s\"", *p);
	fprintf(stderr, "; the log was:\n%s", t_log);
	t_failures++;
}

static __attribute__((unused)) struct doca_devinfo *t_find_dev(struct doca_devinfo **list,
							       uint32_t n, const char *name)
{
	char buf[DOCA_DEVINFO_IBDEV_NAME_SIZE];

	for (uint32_t i = 0; i < n; i++)
		if (doca_devinfo_get_ibdev_name(list[i], buf, sizeof(buf)) == DOCA_SUCCESS &&
		    strcmp(buf, name) == 0)
			return list[i];
	return NULL;
}

static __attribute__((unused)) double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* poll() one fd for reading: 1 readable, 0 not within timeout_ms. */
static __attribute__((unused)) int t_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int r = poll(&pfd, 1, timeout_ms);

	return r == 1 && (pfd.revents & POLLIN) != 0;
}

/*
 * Declare devices (SOFTDPU_DEVICES = decls, no configuration file), capture the log and list
 * them: DOCA_SUCCESS with *list_p / *n_p set, as doca_devinfo_create_list.
 */
static __attribute__((unused)) doca_error_t t_nic_list(const char *decls,
						       struct doca_devinfo ***list_p, uint32_t *n_p)
{
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	t_log_capture();
	return doca_devinfo_create_list(list_p, n_p);
}

/*
 * A test frame of len bytes (60..2048) from 02:00:00:00:00:01 to 02:00:00:00:00:02: a byte
 * pattern of seed under a local experimental ethertype (the checksum offloads leave it alone),
 * or with udp an Ethernet/IPv4/UDP frame (10.0.0.1:1024 -> 10.0.0.2:5001, IPv4 id seed) with
 * the same pattern as payload and both checksums left 0 for the offloads to fill in.
 */
static __attribute__((unused)) void t_frame_fill(uint8_t *buf, uint32_t len, uint32_t seed, int udp)
{
	static const struct sdp_pkt_udp4 hdr = {.dst_mac = {2, 0, 0, 0, 0, 2},
						.src_mac = {2, 0, 0, 0, 0, 1},
						.src_ip = {10, 0, 0, 1},
						.dst_ip = {10, 0, 0, 2},
						.sport = 1024,
						.dport = 5001,
						.ip_frag = SDP_PKT_IP4_DF};
	struct sdp_pkt_udp4 h = hdr;

	for (uint32_t k = 0; k < len; k++)
		buf[k] = (uint8_t)(k * 7 + seed * 29 + 3);
	if (udp) {
		h.ip_id = (uint16_t)seed;
		sdp_pkt_udp4_build(buf, len, &h);
	} else {
		sdp_pkt_eth_build(buf, hdr.dst_mac, hdr.src_mac, 0x88b5);
	}
}

/*
 * got, len bytes, is the UDP frame want of t_frame_fill() after both checksum offloads: the
 * IPv4 and UDP checksums filled in and right, every other byte as in want.
 */
static __attribute__((unused)) int t_udp_offload_ok(const uint8_t *got, const uint8_t *want,
						    uint32_t len)
{
	const uint32_t ip_csum = SDP_PKT_UDP4_IP + SDP_PKT_IP4_CSUM;
	const uint32_t udp_csum = SDP_PKT_UDP4_UDP + SDP_PKT_UDP_CSUM;
	int l3_ok, l4_ok;

	return sdp_pkt_csum_check(got, len, &l3_ok, &l4_ok) && l3_ok && l4_ok &&
	       sdp_pkt_get16(got + ip_csum) != 0 && sdp_pkt_get16(got + udp_csum) != 0 &&
	       memcmp(got, want, ip_csum) == 0 &&
	       memcmp(got + ip_csum + 2, want + ip_csum + 2, udp_csum - ip_csum - 2) == 0 &&
	       memcmp(got + udp_csum + 2, want + udp_csum + 2, len - udp_csum - 2) == 0;
}

#endif /* T_NIC_H_ */
