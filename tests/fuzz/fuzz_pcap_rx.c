/*
 * libFuzzer target for the pcap software NIC's reader (issue 15): the rx file of a pcap device
 * (src/providers/pcap: libpcap's pcap_next_ex, then the provider's own handling of record
 * lengths, timestamps and truncation) replayed flat out through its Ethernet port.
 *
 * One device is declared once (pcap:name=fzpcap<pid>,rx=<file>,speed=max) and opened once; each
 * input becomes the rx file, then a port is opened, drained and closed. Input: byte 0 says
 * whether a valid global header is put first (bit 0; bit 1 picks nanosecond timestamps, bit 2
 * big endian), the rest is the file (after that header). Checked beyond "no crash" (ASan +
 * UBSan): the frames delivered are, in order, records of an independent reading of the file
 * (classic pcap: 24-byte header with either magic in either byte order and link type 1, then
 * 16-byte record headers and their bytes), never more of them than that reading finds: each
 * frame holds the first min(caplen, buffer) bytes of its record, wire_len is the larger of the
 * record's two lengths and SDP_PKT_F_TRUNCATED is set exactly when the frame is shorter; the
 * port always opens or fails cleanly and closes. The reading follows the pcap format's rules
 * as libpcap applies them: versions 2.0 .. 2.4 and 543.0 (DG/UX) only; the two lengths of a
 * record swapped in files older than 2.3 and in 543.0, and in 2.3 when the captured length is
 * the larger; a record whose captured length passes 262144 (Ethernet's maximum) ends the file;
 * one longer than the header's snapshot length (0 or past the maximum: the maximum) is
 * delivered cut to it, its bytes still skipped whole.
 *
 * SOFTDPU_PROVIDER_PATH must name the pcap provider's directory. With -DSDP_FUZZ_MAIN this file
 * has its own main() (tests/fuzz/fuzz_main.h): the replay test.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_dev.h"
#include "softdpu/sdp_pkt.h"
#include "sdp_provider.h"
#include "sdp_provider_eth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FZ_CAP 2048	   /* each frame buffer */
#define FZ_MAX_FRAMES 4096 /* records checked per input */

static char fz_dir[256], fz_path[300];
static struct doca_dev *fz_dev;
static const struct sdp_eth_port_ops *fz_ops;
static uint8_t (*fz_bufs)[FZ_CAP];
static struct sdp_pkt fz_pkts[16];

static void fz_die(const char *what)
{
	fprintf(stderr, "fuzz_pcap_rx: %s\n", what);
	abort();
}

/* Replace the rx file's content (the same inode: the device's declaration names it). */
static void fz_write(const uint8_t *d, size_t n)
{
	int fd = open(fz_path, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0 || (n > 0 && write(fd, d, n) != (ssize_t)n) || close(fd) != 0)
		fz_die("cannot write the rx file");
}

static void fz_cleanup(void)
{
	if (fz_dev != NULL)
		(void)doca_dev_close(fz_dev);
	unlink(fz_path);
	rmdir(fz_dir);
	free(fz_bufs);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const uint8_t empty[24] = {0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0,
					  0,	0,    0,    0,	  0, 0, 4, 0, 1, 0, 0, 0};
	const char *tmp = getenv("TMPDIR");
	struct doca_devinfo **list = NULL;
	uint32_t nb = 0;
	char decl[512], name[64], want[64];

	(void)argc;
	(void)argv;
	if (fz_ops != NULL)
		return 0;
	snprintf(fz_dir, sizeof(fz_dir), "%s/softdpu-fuzz-pcap.XXXXXX", tmp ? tmp : "/tmp");
	if (mkdtemp(fz_dir) == NULL)
		fz_die("mkdtemp");
	snprintf(fz_path, sizeof(fz_path), "%s/rx.pcap", fz_dir);
	fz_write(empty, sizeof(empty)); /* a valid file for the declaration's check */
	snprintf(want, sizeof(want), "fzpcap%d", (int)getpid());
	snprintf(decl, sizeof(decl), "pcap:name=%s,rx=%s,speed=max", want, fz_path);
	setenv("SOFTDPU_DEVICES", decl, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	if (doca_devinfo_create_list(&list, &nb) != DOCA_SUCCESS)
		fz_die("no device list (is SOFTDPU_PROVIDER_PATH the pcap provider's directory?)");
	for (uint32_t i = 0; i < nb && fz_dev == NULL; i++)
		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, want) == 0 && doca_dev_open(list[i], &fz_dev) != DOCA_SUCCESS)
			fz_die("cannot open the pcap device");
	(void)doca_devinfo_destroy_list(list);
	if (fz_dev == NULL)
		fz_die("the pcap device is not listed (SOFTDPU_PROVIDER_PATH)");
	fz_ops = sdp_dev_get_provider_ops(fz_dev)->eth;
	fz_bufs = malloc(sizeof(*fz_bufs) * 16);
	if (fz_ops == NULL || fz_bufs == NULL)
		fz_die("the pcap device has no Ethernet port");
	atexit(fz_cleanup);
	return 0;
}

/* ---- the independent reading ---------------------------------------------------------------- */

struct fz_rec {
	const uint8_t *data;
	uint32_t caplen, len;
};

static uint32_t fz_get32(const uint8_t *p, int be)
{
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3] :
		    (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint32_t fz_get16(const uint8_t *p, int be)
{
	return be ? (uint32_t)p[0] << 8 | p[1] : (uint32_t)p[1] << 8 | p[0];
}

#define FZ_MAX_SNAPLEN 262144u /* libpcap's maximum for DLT_EN10MB */

/* The records of a classic pcap file f[0..n); how many (0 when it is not one). */
static size_t fz_read(const uint8_t *f, size_t n, struct fz_rec *recs, size_t max)
{
	size_t off = 24, k = 0;
	uint32_t magic, major, minor, snap;
	int be, swapped, maybe;

	if (n < 24)
		return 0;
	magic = fz_get32(f, 0);
	if (magic == 0xa1b2c3d4u || magic == 0xa1b23c4du)
		be = 0;
	else if (magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u)
		be = 1;
	else
		return 0;
	if ((fz_get32(f + 20, be) & 0xffff) != 1) /* link type EN10MB */
		return 0;
	major = fz_get16(f + 4, be);
	minor = fz_get16(f + 6, be);
	if (!(major == 2 && minor <= 4) && !(major == 543 && minor == 0))
		return 0;
	swapped = major == 543 || minor < 3;
	maybe = major == 2 && minor == 3;
	snap = fz_get32(f + 16, be);
	if (snap == 0 || snap > FZ_MAX_SNAPLEN)
		snap = FZ_MAX_SNAPLEN;
	while (k < max && off + 16 <= n) {
		uint32_t cap = fz_get32(f + off + 8, be), len = fz_get32(f + off + 12, be);

		if (swapped || (maybe && cap > len)) {
			uint32_t t = cap;

			cap = len;
			len = t;
		}
		if (cap > FZ_MAX_SNAPLEN || cap > n - off - 16)
			break;
		recs[k].data = f + off + 16;
		recs[k].caplen = cap < snap ? cap : snap;
		recs[k].len = len;
		k++;
		off += 16 + (size_t)cap;
	}
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_rec recs[FZ_MAX_FRAMES];
	struct sdp_eth_port_cfg cfg = {.nb_rxq = 1, .nb_txq = 0, .ring_size = 256};
	struct sdp_eth_port_info info;
	struct sdp_eth_port *port = NULL;
	uint8_t *file;
	size_t n, nrec, got = 0;
	int idle = 0;

	if (size < 1)
		return 0;
	if (fz_ops == NULL)
		LLVMFuzzerInitialize(NULL, NULL);
	n = size - 1 + ((data[0] & 1) ? 24 : 0);
	file = malloc(n > 0 ? n : 1);
	if (file == NULL)
		abort();
	if (data[0] & 1) {
		int be = (data[0] >> 2) & 1;
		uint32_t magic = (data[0] & 2) ? 0xa1b23c4du : 0xa1b2c3d4u;
		uint32_t w[6] = {magic, 0x00040002u, 0, 0, 65535, 1};

		for (int i = 0; i < 6; i++)
			for (int b = 0; b < 4; b++)
				file[i * 4 + b] =
					(uint8_t)(w[i] >> (be ? 8 * (3 - b) : 8 * b)) & 0xff;
		/* version is two 16-bit fields (2, 4) in the file's byte order */
		file[4] = be ? 0 : 2, file[5] = be ? 2 : 0, file[6] = be ? 0 : 4,
		file[7] = be ? 4 : 0;
		memcpy(file + 24, data + 1, size - 1);
	} else {
		memcpy(file, data + 1, size - 1);
	}
	fz_write(file, n);
	nrec = fz_read(file, n, recs, FZ_MAX_FRAMES);
	if (fz_ops->port_open(sdp_dev_get_priv(fz_dev), &cfg, &port, &info) != DOCA_SUCCESS) {
		free(file);
		return 0;
	}
	while (idle < 2 && got <= nrec && got < FZ_MAX_FRAMES) {
		uint16_t k;

		for (int i = 0; i < 16; i++) {
			fz_pkts[i].data = fz_bufs[i];
			fz_pkts[i].cap = FZ_CAP;
		}
		k = fz_ops->rx_burst(port, 0, fz_pkts, 16);
		idle = k == 0 ? idle + 1 : 0;
		for (uint16_t i = 0; i < k; i++, got++) {
			const struct sdp_pkt *p = &fz_pkts[i];
			const struct fz_rec *r = &recs[got];
			uint32_t want_len, want_wire;

			if (got >= nrec)
				fz_die("more frames than the file holds records");
			want_len = r->caplen < FZ_CAP ? r->caplen : FZ_CAP;
			want_wire = r->len > r->caplen ? r->len : r->caplen;
			if (p->len != want_len || p->wire_len != want_wire ||
			    memcmp(p->data, r->data, want_len) != 0)
				fz_die("a frame differs from its record");
			if (((p->flags & SDP_PKT_F_TRUNCATED) != 0) != (p->len < p->wire_len))
				fz_die("the truncated flag does not match the lengths");
		}
	}
	fz_ops->port_close(port);
	free(file);
	return 0;
}

#ifdef SDP_FUZZ_MAIN
#include "fuzz_main.h"

/* A header flag byte, then records of plausible and odd lengths, sometimes cut or noisy. */
static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	size_t off = 1;
	int nrec = (int)(fuzz_rnd() % 6);

	if (cap < 2)
		return 0;
	buf[0] = (uint8_t)(fuzz_rnd() % 16 | (fuzz_rnd() % 4 ? 1 : 0));
	for (int k = 0; k < nrec; k++) {
		uint32_t caplen = fuzz_rnd() % 3 ? (uint32_t)(fuzz_rnd() % 200) :
						   (uint32_t)(fuzz_rnd() % 3000),
			 len = fuzz_rnd() % 2 ? caplen : (uint32_t)fuzz_rnd() % 70000;
		uint32_t h[4] = {(uint32_t)fuzz_rnd(), (uint32_t)(fuzz_rnd() % 2000000000u), caplen,
				 len};

		if (off + 16 + caplen > cap)
			break;
		memcpy(buf + off, h, 16); /* little endian host: a little-endian file */
		off += 16;
		for (uint32_t i = 0; i < caplen; i++)
			buf[off + i] = (uint8_t)fuzz_rnd();
		off += caplen;
	}
	if (fuzz_rnd() % 4 == 0 && off > 2)
		off -= fuzz_rnd() % (off - 1); /* cut */
	return off;
}
#endif /* SDP_FUZZ_MAIN */
