/*
 * The `pcap` device provider: a software NIC whose wire is a pair of pcap files.
 *
 *   pcap:name=<ibdev>,rx=<file.pcap>[,loop=0|1][,speed=recorded|<pps>|max][,tx=<out.pcap>]
 *
 * RX replays the Ethernet frames of the rx file (link type EN10MB), once or looped, at the
 * recorded inter-frame timing (default), at a given rate in frames per second, or as fast as the
 * engine takes them. Each port open starts the replay from the beginning of the file. A looped
 * replay at recorded speed puts one mean inter-frame gap between the last frame of a pass and the
 * first of the next (none when every frame carries the same time). While a looped file's frames
 * fit in PCAP_CACHE_MAX bytes, the passes after the first come from memory.
 *
 * TX appends every transmitted frame to the tx file (nanosecond pcap, time of transmission). The
 * file is created (truncated) at the first port open of the device, flushed at every port close
 * and closed with the device, so a context stopped and started again keeps adding to it. Without
 * a tx file, transmitted frames are taken and discarded. A declaration may have rx, tx or both.
 *
 * Identity: ibdev name `name`, interface name `name`, a synthetic PCI address in domain ffff on
 * bus SDP_NIC_BUS_PCAP (sdp_nic_pci_assign), function type PF, link always up. One RX and one TX
 * queue per port. rx_fd is a timerfd armed for the next frame's time (recorded or given rate) or
 * an eventfd readable while frames remain (max); tx_fd is a timerfd for wait-on-time sends.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pcap/pcap.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "sdp_log.h"
#include "sdp_nic_decl.h"
#include "sdp_provider.h"
#include "sdp_provider_eth.h"

SDP_LOG_COMPONENT("pcap");

#define PCAP_ETH_HLEN 14
#define PCAP_MAX_PPS 1000000000ull
#define PCAP_CACHE_MAX (64ull << 20) /* frames a looped replay keeps in memory, bytes */
#define NSEC_PER_SEC 1000000000ull

enum pcap_speed {
	PCAP_SPEED_RECORDED = 0,
	PCAP_SPEED_PPS,
	PCAP_SPEED_MAX,
};

/* A declaration, checked. Owned by a devinfo (attr.priv), copied by dev_open. */
struct pcap_conf {
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	char *rx_path; /* NULL: no RX */
	char *tx_path; /* NULL: transmitted frames are discarded */
	int loop;
	enum pcap_speed speed;
	uint64_t pps; /* PCAP_SPEED_PPS */
};

/* An open device: its configuration and the TX file shared by its ports. */
struct pcap_dev {
	struct pcap_conf conf;
	pthread_mutex_t tx_lock; /* tx_dead, dumper, tx_* counters */
	pcap_t *tx_dead;
	pcap_dumper_t *dumper;
	uint64_t tx_frames;
	uint64_t tx_discarded; /* no tx file, or a frame no pcap can hold */
};

/* One frame of the replay cache. */
struct pcap_cached {
	uint64_t ts_ns; /* recorded time */
	uint32_t caplen;
	uint32_t wire_len;
	size_t off; /* in cache_data */
};

struct sdp_eth_port {
	struct pcap_dev *dev;
	int has_rxq;
	int has_txq;

	/* RX (used by the RX queue's thread only) */
	pcap_t *rx;    /* the file being read; NULL while replaying from the cache or done */
	int rx_fd;     /* timerfd (recorded, pps) or eventfd (max) */
	int rx_done;   /* no frame will come any more */
	int have_next; /* next_* hold the frame to deliver next */
	uint64_t next_ts_ns;
	uint32_t next_caplen;
	uint32_t next_wire_len;
	const uint8_t *next_data;
	uint64_t pass;	       /* completed passes over the file */
	uint64_t pass_frames;  /* frames read in the current pass */
	uint64_t first_ts_ns;  /* recorded time of the file's first frame */
	uint64_t last_ts_ns;   /* recorded time of the last frame read */
	uint64_t pass_base_ns; /* CLOCK_MONOTONIC time the current pass's first frame is due */
	uint64_t start_ns;     /* CLOCK_MONOTONIC time of the port open */
	uint64_t delivered;    /* frames handed to the engine */
	/* replay cache, built during the first pass of a looped replay */
	int cache_on;	/* still collecting (first pass, under the size limit) */
	int from_cache; /* passes after the first read cache[] */
	struct pcap_cached *cache;
	size_t cache_num;
	size_t cache_cap;
	uint8_t *cache_data;
	size_t cache_bytes;
	size_t cache_data_cap;
	size_t cache_pos; /* next cache[] entry while from_cache */

	/* TX */
	int tx_fd; /* timerfd (CLOCK_REALTIME) for a frame whose send time is still ahead */
};

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static doca_error_t errno_status(int err)
{
	switch (err) {
	case ENOENT:
		return DOCA_ERROR_NOT_FOUND;
	case EPERM:
	case EACCES:
	case EROFS:
		return DOCA_ERROR_NOT_PERMITTED;
	case ENOMEM:
		return DOCA_ERROR_NO_MEMORY;
	default:
		return DOCA_ERROR_IO_FAILED;
	}
}

/* ---- declarations ---------------------------------------------------------------------------- */

static void pcap_conf_clear(struct pcap_conf *conf)
{
	free(conf->rx_path);
	free(conf->tx_path);
	memset(conf, 0, sizeof(*conf));
}

/*
 * Open an rx file and check it holds Ethernet frames. Returns the handle, or NULL after logging
 * the cause (prefixed with `where`) at `level` (WARNING for a refused declaration, ERROR for a
 * port that cannot open) and setting *status_p.
 */
static pcap_t *pcap_rx_file_open(const char *where, const char *path, uint32_t level,
				 doca_error_t *status_p)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct stat st;
	pcap_t *p;

	if (stat(path, &st) != 0) {
		int err = errno;

		sdp_log(level, "%s: rx file %s: %m", where, path);
		*status_p = errno_status(err);
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		sdp_log(level, "%s: rx file %s is a directory", where, path);
		*status_p = DOCA_ERROR_INVALID_VALUE;
		return NULL;
	}
	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (p == NULL) {
		sdp_log(level, "%s: rx file %s is not a readable pcap file: %s", where, path,
			errbuf);
		*status_p = DOCA_ERROR_INVALID_VALUE;
		return NULL;
	}
	if (pcap_datalink(p) != DLT_EN10MB) {
		sdp_log(level,
			"%s: rx file %s has link type %s, only Ethernet (EN10MB) is supported",
			where, path, pcap_datalink_val_to_name(pcap_datalink(p)) ?: "unknown");
		pcap_close(p);
		*status_p = DOCA_ERROR_NOT_SUPPORTED;
		return NULL;
	}
	return p;
}

/*
 * Read decl into conf (allocating the paths). With `check_files`, also open the rx file and check
 * the tx file's directory. Returns DOCA_SUCCESS or an error after logging the reason.
 */
static doca_error_t pcap_conf_parse(const struct sdp_dev_decl *decl, int check_files,
				    struct pcap_conf *conf)
{
	static const char *const keys[] = {"name", "rx", "tx", "loop", "speed", NULL};
	const char *name = sdp_dev_decl_get(decl, "name");
	const char *rx = sdp_dev_decl_get(decl, "rx");
	const char *tx = sdp_dev_decl_get(decl, "tx");
	const char *speed = sdp_dev_decl_get(decl, "speed");
	doca_error_t status = DOCA_SUCCESS;
	uint64_t loop;

	memset(conf, 0, sizeof(*conf));
	if (!sdp_nic_decl_keys_ok(decl, keys) || !sdp_nic_decl_name_ok(decl, "name", name))
		return DOCA_ERROR_INVALID_VALUE;
	if (rx == NULL && tx == NULL) {
		sdp_warn(
			"%s: a pcap device needs rx=<file> to replay, tx=<file> to record, or both",
			decl->origin);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!sdp_nic_decl_uint(decl, "loop", 0, 1, 0, &loop))
		return DOCA_ERROR_INVALID_VALUE;
	if (rx == NULL && (speed != NULL || sdp_dev_decl_get(decl, "loop") != NULL)) {
		sdp_warn("%s: loop= and speed= describe the replay and need rx=<file>",
			 decl->origin);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (rx != NULL && tx != NULL && strcmp(rx, tx) == 0) {
		sdp_warn("%s: rx and tx name the same file %s", decl->origin, rx);
		return DOCA_ERROR_INVALID_VALUE;
	}
	snprintf(conf->name, sizeof(conf->name), "%s", name);
	conf->loop = (int)loop;
	if (speed == NULL || strcmp(speed, "recorded") == 0) {
		conf->speed = PCAP_SPEED_RECORDED;
	} else if (strcmp(speed, "max") == 0) {
		conf->speed = PCAP_SPEED_MAX;
	} else {
		if (!sdp_nic_decl_uint(decl, "speed", 1, PCAP_MAX_PPS, 0, &conf->pps)) {
			sdp_warn("%s: speed must be recorded, max or a rate in frames per second",
				 decl->origin);
			return DOCA_ERROR_INVALID_VALUE;
		}
		conf->speed = PCAP_SPEED_PPS;
	}

	if (check_files && rx != NULL) {
		pcap_t *p = pcap_rx_file_open(decl->origin, rx, DOCA_LOG_LEVEL_WARNING, &status);

		if (p == NULL)
			return status;
		pcap_close(p);
	}
	if (check_files && tx != NULL) {
		char *copy = strdup(tx);
		const char *dir;

		if (copy == NULL)
			return DOCA_ERROR_NO_MEMORY;
		dir = dirname(copy);
		if (access(dir, W_OK | X_OK) != 0) {
			int err = errno;

			sdp_warn("%s: tx file %s: cannot create files in %s: %m", decl->origin, tx,
				 dir);
			free(copy);
			return errno_status(err);
		}
		free(copy);
	}

	if (rx != NULL && (conf->rx_path = strdup(rx)) == NULL)
		goto err_no_memory;
	if (tx != NULL && (conf->tx_path = strdup(tx)) == NULL)
		goto err_no_memory;
	return DOCA_SUCCESS;

err_no_memory:
	sdp_error("%s: out of memory reading the declaration", decl->origin);
	pcap_conf_clear(conf);
	return DOCA_ERROR_NO_MEMORY;
}

static doca_error_t pcap_decl_check(const struct sdp_dev_decl *decl)
{
	struct pcap_conf conf;
	doca_error_t status = pcap_conf_parse(decl, 1, &conf);

	if (status == DOCA_SUCCESS)
		pcap_conf_clear(&conf);
	return status;
}

static void pcap_devinfo_free(void *priv)
{
	struct pcap_conf *conf = priv;

	pcap_conf_clear(conf);
	free(conf);
}

/* conf_read of sdp_nic_enumerate: the files are opened again when a port opens. */
static doca_error_t pcap_conf_read(const struct sdp_dev_decl *const *decls, size_t num_decls,
				   size_t i, void *conf)
{
	(void)num_decls;
	return pcap_conf_parse(decls[i], 0, conf);
}

static void pcap_conf_clear_cb(void *conf)
{
	pcap_conf_clear(conf);
}

static const struct sdp_nic_provider pcap_nic = {
	.name = "pcap",
	.bus = SDP_NIC_BUS_PCAP,
	.conf_size = sizeof(struct pcap_conf),
	.name_off = offsetof(struct pcap_conf, name),
	.conf_read = pcap_conf_read,
	.conf_clear = pcap_conf_clear_cb,
};

static doca_error_t pcap_enumerate(const struct sdp_dev_decl *const *decls, size_t num_decls,
				   struct sdp_devinfo_sink *sink)
{
	return sdp_nic_enumerate(&pcap_nic, decls, num_decls, sink);
}

/* ---- devices --------------------------------------------------------------------------------- */

/* sdp_nic_dev_alloc copies the configuration into the start of the device */
_Static_assert(offsetof(struct pcap_dev, conf) == 0, "pcap_dev must start with its pcap_conf");

static doca_error_t pcap_dev_open(const struct sdp_devinfo_attr *attr, void **dev_priv)
{
	const struct pcap_conf *conf;
	struct pcap_dev *dev;
	doca_error_t status;
	void *mem;

	status = sdp_nic_dev_alloc("pcap", attr, sizeof(*dev), sizeof(*conf), &mem);
	if (status != DOCA_SUCCESS)
		return status;
	dev = mem;
	/* the paths are the devinfo's, which may die first: the device takes its own */
	conf = attr->priv;
	dev->conf.rx_path = NULL;
	dev->conf.tx_path = NULL;
	if ((conf->rx_path != NULL && (dev->conf.rx_path = strdup(conf->rx_path)) == NULL) ||
	    (conf->tx_path != NULL && (dev->conf.tx_path = strdup(conf->tx_path)) == NULL)) {
		sdp_error("out of memory opening pcap device %s", attr->ibdev_name);
		pcap_conf_clear(&dev->conf);
		free(dev);
		return DOCA_ERROR_NO_MEMORY;
	}
	pthread_mutex_init(&dev->tx_lock, NULL);
	*dev_priv = dev;
	return DOCA_SUCCESS;
}

static void pcap_dev_close(const struct sdp_devinfo_attr *attr, void *dev_priv)
{
	struct pcap_dev *dev = dev_priv;

	if (dev == NULL)
		return;
	if (dev->dumper != NULL) {
		if (pcap_dump_flush(dev->dumper) != 0)
			sdp_warn("pcap device %s: failed to flush tx file %s", attr->ibdev_name,
				 dev->conf.tx_path);
		pcap_dump_close(dev->dumper);
	}
	if (dev->tx_dead != NULL)
		pcap_close(dev->tx_dead);
	sdp_debug("pcap device %s closed: %llu frame(s) recorded, %llu discarded", attr->ibdev_name,
		  (unsigned long long)dev->tx_frames, (unsigned long long)dev->tx_discarded);
	pthread_mutex_destroy(&dev->tx_lock);
	pcap_conf_clear(&dev->conf);
	free(dev);
}

/* Create the device's tx file at its first port open (under tx_lock). */
static doca_error_t pcap_tx_file_open(struct pcap_dev *dev)
{
	if (dev->conf.tx_path == NULL || dev->dumper != NULL)
		return DOCA_SUCCESS;
	dev->tx_dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, SDP_ETH_MAX_FRAME,
							    PCAP_TSTAMP_PRECISION_NANO);
	if (dev->tx_dead == NULL) {
		sdp_error("pcap device %s: out of memory preparing tx file %s", dev->conf.name,
			  dev->conf.tx_path);
		return DOCA_ERROR_NO_MEMORY;
	}
	errno = 0;
	dev->dumper = pcap_dump_open(dev->tx_dead, dev->conf.tx_path);
	if (dev->dumper == NULL) {
		int err = errno;

		sdp_error("pcap device %s: failed to create tx file %s: %s", dev->conf.name,
			  dev->conf.tx_path, pcap_geterr(dev->tx_dead));
		pcap_close(dev->tx_dead);
		dev->tx_dead = NULL;
		return err != 0 ? errno_status(err) : DOCA_ERROR_IO_FAILED;
	}
	return DOCA_SUCCESS;
}

/* ---- RX replay ------------------------------------------------------------------------------- */

static void rx_cache_drop(struct sdp_eth_port *port)
{
	free(port->cache);
	free(port->cache_data);
	port->cache = NULL;
	port->cache_data = NULL;
	port->cache_num = port->cache_cap = 0;
	port->cache_bytes = port->cache_data_cap = 0;
	port->cache_on = 0;
}

/* Keep a frame of the first pass for the following ones; stop caching past the limit. */
static void rx_cache_add(struct sdp_eth_port *port, uint64_t ts_ns, uint32_t caplen,
			 uint32_t wire_len, const uint8_t *data)
{
	if (!port->cache_on)
		return;
	if (port->cache_bytes + caplen > PCAP_CACHE_MAX) {
		sdp_debug("pcap device %s: rx file over %llu bytes, later passes read it again",
			  port->dev->conf.name, (unsigned long long)PCAP_CACHE_MAX);
		rx_cache_drop(port);
		return;
	}
	if (port->cache_num == port->cache_cap) {
		size_t cap = port->cache_cap ? port->cache_cap * 2 : 256;
		struct pcap_cached *c = realloc(port->cache, cap * sizeof(*c));

		if (c == NULL)
			goto fail;
		port->cache = c;
		port->cache_cap = cap;
	}
	if (port->cache_bytes + caplen > port->cache_data_cap) {
		size_t cap = port->cache_data_cap ? port->cache_data_cap : 65536;
		uint8_t *d;

		while (cap < port->cache_bytes + caplen)
			cap *= 2;
		d = realloc(port->cache_data, cap);
		if (d == NULL)
			goto fail;
		port->cache_data = d;
		port->cache_data_cap = cap;
	}
	memcpy(port->cache_data + port->cache_bytes, data, caplen);
	port->cache[port->cache_num++] = (struct pcap_cached){
		.ts_ns = ts_ns, .caplen = caplen, .wire_len = wire_len, .off = port->cache_bytes};
	port->cache_bytes += caplen;
	return;
fail:
	/* not an error: the replay reads the file again instead */
	sdp_debug("pcap device %s: no memory to cache the rx file, later passes read it again",
		  port->dev->conf.name);
	rx_cache_drop(port);
}

/* The end of a pass: start the next one (loop) or finish. Returns 1 when a new pass starts. */
static int rx_next_pass(struct sdp_eth_port *port)
{
	doca_error_t status;
	uint64_t span, gap;

	if (!port->dev->conf.loop || port->pass_frames == 0) {
		port->rx_done = 1;
		return 0;
	}
	span = port->last_ts_ns > port->first_ts_ns ? port->last_ts_ns - port->first_ts_ns : 0;
	gap = port->pass_frames > 1 ? span / (port->pass_frames - 1) : 0;
	port->pass_base_ns += span + gap;
	port->pass++;
	port->pass_frames = 0;
	if (port->cache_on) {
		/* the whole first pass is in memory */
		port->cache_on = 0;
		port->from_cache = 1;
		pcap_close(port->rx);
		port->rx = NULL;
	}
	if (port->from_cache) {
		port->cache_pos = 0;
		return 1;
	}
	if (port->rx != NULL)
		pcap_close(port->rx);
	port->rx = pcap_rx_file_open(port->dev->conf.name, port->dev->conf.rx_path,
				     DOCA_LOG_LEVEL_WARNING, &status);
	if (port->rx == NULL) {
		/* reported; the replay ends here */
		port->rx_done = 1;
		return 0;
	}
	return 1;
}

/* Make next_* hold the next frame of the replay. Returns 0 when the replay is over. */
static int rx_fetch(struct sdp_eth_port *port)
{
	for (int tries = 0; !port->have_next && !port->rx_done && tries < 2; tries++) {
		if (port->from_cache) {
			if (port->cache_pos < port->cache_num) {
				const struct pcap_cached *c = &port->cache[port->cache_pos++];

				port->next_ts_ns = c->ts_ns;
				port->next_caplen = c->caplen;
				port->next_wire_len = c->wire_len;
				port->next_data = port->cache_data + c->off;
				port->have_next = 1;
			}
		} else {
			struct pcap_pkthdr *hdr;
			const u_char *data;
			int rc = pcap_next_ex(port->rx, &hdr, &data);

			if (rc == 1) {
				port->next_ts_ns = (uint64_t)hdr->ts.tv_sec * NSEC_PER_SEC +
						   (uint64_t)hdr->ts.tv_usec;
				port->next_caplen = hdr->caplen;
				port->next_wire_len =
					hdr->len > hdr->caplen ? hdr->len : hdr->caplen;
				port->next_data = data;
				port->have_next = 1;
				if (port->pass == 0)
					rx_cache_add(port, port->next_ts_ns, hdr->caplen,
						     port->next_wire_len, data);
			} else if (rc != PCAP_ERROR_BREAK) {
				sdp_error("pcap device %s: failed to read rx file %s: %s",
					  port->dev->conf.name, port->dev->conf.rx_path,
					  pcap_geterr(port->rx));
				port->rx_done = 1;
				return 0;
			}
		}
		if (port->have_next) {
			if (port->pass == 0 && port->pass_frames == 0)
				port->first_ts_ns = port->next_ts_ns;
			port->last_ts_ns = port->next_ts_ns;
			port->pass_frames++;
			return 1;
		}
		/* end of this pass */
		if (!rx_next_pass(port))
			return 0;
	}
	return port->have_next;
}

/* CLOCK_MONOTONIC time the next frame is due (0: now). */
static uint64_t rx_due_ns(const struct sdp_eth_port *port)
{
	const struct pcap_conf *conf = &port->dev->conf;
	uint64_t k = port->delivered;

	switch (conf->speed) {
	case PCAP_SPEED_RECORDED:
		if (port->next_ts_ns <= port->first_ts_ns)
			return port->pass_base_ns;
		return port->pass_base_ns + (port->next_ts_ns - port->first_ts_ns);
	case PCAP_SPEED_PPS:
		return port->start_ns + (k / conf->pps) * NSEC_PER_SEC +
		       (k % conf->pps) * NSEC_PER_SEC / conf->pps;
	case PCAP_SPEED_MAX:
	default:
		return 0;
	}
}

/* Arm rx_fd for what comes next: the next frame's time, or nothing when the replay is over. */
static void rx_fd_update(struct sdp_eth_port *port)
{
	if (port->dev->conf.speed == PCAP_SPEED_MAX) {
		uint64_t v;

		/* readable while frames remain: written once at open, drained at the end */
		if (port->rx_done && read(port->rx_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			sdp_warn("pcap device %s: failed to read rx eventfd: %m",
				 port->dev->conf.name);
		return;
	} else {
		struct itimerspec its;
		uint64_t due = port->have_next ? rx_due_ns(port) : 0;

		memset(&its, 0, sizeof(its));
		if (port->have_next) {
			if (due == 0)
				due = 1; /* a zero time would disarm; 1 ns is long past: fires at once */
			its.it_value.tv_sec = (time_t)(due / NSEC_PER_SEC);
			its.it_value.tv_nsec = (long)(due % NSEC_PER_SEC);
		}
		if (timerfd_settime(port->rx_fd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
			sdp_warn("pcap device %s: failed to arm rx timerfd: %m",
				 port->dev->conf.name);
	}
}

static uint16_t pcap_rx_burst(struct sdp_eth_port *port, uint16_t q, struct sdp_pkt *pkts,
			      uint16_t n)
{
	uint64_t now, now_real;
	uint16_t got = 0;

	if (port == NULL || pkts == NULL || q != 0 || !port->has_rxq ||
	    port->dev->conf.rx_path == NULL)
		return 0;
	if (port->dev->conf.speed != PCAP_SPEED_MAX) {
		uint64_t expirations;

		/* consume the expiry that woke the engine; re-armed below */
		if (read(port->rx_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
			sdp_warn("pcap device %s: failed to read rx timerfd: %m",
				 port->dev->conf.name);
	}
	now = clock_ns(CLOCK_MONOTONIC);
	now_real = clock_ns(CLOCK_REALTIME);
	while (got < n && rx_fetch(port)) {
		struct sdp_pkt *pkt = &pkts[got];
		uint32_t len;

		if (rx_due_ns(port) > now)
			break;
		len = port->next_caplen < pkt->cap ? port->next_caplen : pkt->cap;
		if (len > 0)
			memcpy(pkt->data, port->next_data, len);
		pkt->len = len;
		pkt->wire_len = port->next_wire_len;
		pkt->flags = len < pkt->wire_len ? SDP_PKT_F_TRUNCATED : 0;
		pkt->ts_ns = now_real;
		port->have_next = 0;
		port->delivered++;
		got++;
	}
	/* look ahead so the fd is armed for the frame after this burst */
	rx_fetch(port);
	rx_fd_update(port);
	return got;
}

static int pcap_rx_fd(struct sdp_eth_port *port, uint16_t q)
{
	if (port == NULL || q != 0 || !port->has_rxq)
		return -1;
	return port->rx_fd;
}

/* ---- TX -------------------------------------------------------------------------------------- */

static uint16_t pcap_tx_burst(struct sdp_eth_port *port, uint16_t q, const struct sdp_pkt *pkts,
			      uint16_t n)
{
	struct pcap_dev *dev;
	uint64_t now, expirations;
	uint16_t done = 0;

	if (port == NULL || pkts == NULL || q != 0 || !port->has_txq)
		return 0;
	dev = port->dev;
	if (read(port->tx_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		sdp_warn("pcap device %s: failed to read tx timerfd: %m", dev->conf.name);
	now = clock_ns(CLOCK_REALTIME);

	pthread_mutex_lock(&dev->tx_lock);
	for (; done < n; done++) {
		const struct sdp_pkt *pkt = &pkts[done];
		struct pcap_pkthdr hdr;

		if (pkt->ts_ns > now) {
			/* wait-on-time: the engine comes back when tx_fd fires */
			struct itimerspec its;

			memset(&its, 0, sizeof(its));
			its.it_value.tv_sec = (time_t)(pkt->ts_ns / NSEC_PER_SEC);
			its.it_value.tv_nsec = (long)(pkt->ts_ns % NSEC_PER_SEC);
			if (timerfd_settime(port->tx_fd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
				sdp_warn("pcap device %s: failed to arm tx timerfd: %m",
					 dev->conf.name);
			break;
		}
		if (dev->dumper == NULL || pkt->data == NULL || pkt->len == 0 ||
		    pkt->len > SDP_ETH_MAX_FRAME) {
			if (dev->dumper != NULL && dev->tx_discarded == 0)
				sdp_warn("pcap device %s: discarding a frame of %u bytes (1 to %u "
					 "can be recorded)",
					 dev->conf.name, pkt->len, SDP_ETH_MAX_FRAME);
			dev->tx_discarded++;
			continue;
		}
		hdr.ts.tv_sec = (time_t)(now / NSEC_PER_SEC);
		hdr.ts.tv_usec = (suseconds_t)(now % NSEC_PER_SEC); /* nanoseconds: nano file */
		hdr.caplen = pkt->len;
		hdr.len = pkt->len;
		pcap_dump((u_char *)dev->dumper, &hdr, pkt->data);
		dev->tx_frames++;
	}
	pthread_mutex_unlock(&dev->tx_lock);
	return done;
}

static int pcap_tx_fd(struct sdp_eth_port *port, uint16_t q)
{
	if (port == NULL || q != 0 || !port->has_txq)
		return -1;
	return port->tx_fd;
}

static int pcap_link_up(struct sdp_eth_port *port)
{
	(void)port;
	return 1;
}

/* ---- ports ----------------------------------------------------------------------------------- */

static void pcap_port_close(struct sdp_eth_port *port)
{
	struct pcap_dev *dev;

	if (port == NULL)
		return;
	dev = port->dev;
	pthread_mutex_lock(&dev->tx_lock);
	if (dev->dumper != NULL && pcap_dump_flush(dev->dumper) != 0)
		sdp_warn("pcap device %s: failed to flush tx file %s: %m", dev->conf.name,
			 dev->conf.tx_path);
	pthread_mutex_unlock(&dev->tx_lock);
	if (port->tx_fd >= 0)
		close(port->tx_fd);
	if (port->rx_fd >= 0)
		close(port->rx_fd);
	if (port->rx != NULL)
		pcap_close(port->rx);
	rx_cache_drop(port);
	sdp_debug("pcap device %s: port closed after %llu frame(s) replayed", dev->conf.name,
		  (unsigned long long)port->delivered);
	free(port);
}

static doca_error_t pcap_port_open(void *dev_priv, const struct sdp_eth_port_cfg *cfg,
				   struct sdp_eth_port **port_p, struct sdp_eth_port_info *info_p)
{
	struct pcap_dev *dev = dev_priv;
	struct sdp_eth_port *port;
	doca_error_t status;

	if (dev == NULL || cfg == NULL || port_p == NULL || info_p == NULL) {
		sdp_error("pcap port_open: NULL argument (dev %p, cfg %p, port_p %p, info_p %p)",
			  dev_priv, (const void *)cfg, (void *)port_p, (void *)info_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (cfg->nb_rxq == 0 && cfg->nb_txq == 0) {
		sdp_error("pcap device %s: a port needs at least one RX or TX queue",
			  dev->conf.name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	port = calloc(1, sizeof(*port));
	if (port == NULL) {
		sdp_error("out of memory opening a port of pcap device %s", dev->conf.name);
		return DOCA_ERROR_NO_MEMORY;
	}
	port->dev = dev;
	port->has_rxq = cfg->nb_rxq > 0;
	port->has_txq = cfg->nb_txq > 0;
	port->rx_fd = -1;
	port->tx_fd = -1;

	if (dev->conf.speed == PCAP_SPEED_MAX)
		port->rx_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	else
		port->rx_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (port->rx_fd < 0) {
		sdp_error("pcap device %s: failed to create the rx fd: %m", dev->conf.name);
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_free_port;
	}
	port->tx_fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (port->tx_fd < 0) {
		sdp_error("pcap device %s: failed to create the tx timerfd: %m", dev->conf.name);
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_close_rx_fd;
	}

	if (port->has_rxq && dev->conf.rx_path != NULL) {
		port->rx = pcap_rx_file_open(dev->conf.name, dev->conf.rx_path,
					     DOCA_LOG_LEVEL_ERROR, &status);
		if (port->rx == NULL)
			goto err_close_tx_fd;
		port->cache_on = dev->conf.loop;
		port->start_ns = clock_ns(CLOCK_MONOTONIC);
		port->pass_base_ns = port->start_ns;
		if (dev->conf.speed == PCAP_SPEED_MAX) {
			uint64_t one = 1;

			if (write(port->rx_fd, &one, sizeof(one)) != sizeof(one)) {
				sdp_error("pcap device %s: failed to signal the rx eventfd: %m",
					  dev->conf.name);
				status = DOCA_ERROR_OPERATING_SYSTEM;
				goto err_close_rx;
			}
		}
		rx_fetch(port);
		rx_fd_update(port);
	}
	if (port->has_txq) {
		pthread_mutex_lock(&dev->tx_lock);
		status = pcap_tx_file_open(dev);
		pthread_mutex_unlock(&dev->tx_lock);
		if (status != DOCA_SUCCESS)
			goto err_close_rx;
	}

	memset(info_p, 0, sizeof(*info_p));
	info_p->nb_rxq = port->has_rxq ? 1 : 0;
	info_p->nb_txq = port->has_txq ? 1 : 0;
	info_p->mtu = SDP_ETH_MAX_FRAME - PCAP_ETH_HLEN;
	sdp_nic_default_mac(dev->conf.name, SDP_NIC_BUS_PCAP, info_p->mac);
	info_p->has_rx_fd = 1;
	sdp_debug("pcap device %s: port open (rx %s, tx %s)", dev->conf.name,
		  dev->conf.rx_path ?: "none", dev->conf.tx_path ?: "discarded");
	*port_p = port;
	return DOCA_SUCCESS;

err_close_rx:
	if (port->rx != NULL)
		pcap_close(port->rx);
	rx_cache_drop(port);
err_close_tx_fd:
	close(port->tx_fd);
err_close_rx_fd:
	close(port->rx_fd);
err_free_port:
	free(port);
	return status;
}

static const struct sdp_eth_port_ops pcap_eth_ops = {
	.port_open = pcap_port_open,
	.port_close = pcap_port_close,
	.rx_burst = pcap_rx_burst,
	.tx_burst = pcap_tx_burst,
	.rx_fd = pcap_rx_fd,
	.tx_fd = pcap_tx_fd,
	.link_up = pcap_link_up,
};

static const struct sdp_provider_ops pcap_ops = {
	.abi_version = SDP_PROVIDER_ABI_VERSION,
	.name = "pcap",
	.decl_check = pcap_decl_check,
	.enumerate = pcap_enumerate,
	.dev_open = pcap_dev_open,
	.dev_close = pcap_dev_close,
	.devinfo_free = pcap_devinfo_free,
	.eth = &pcap_eth_ops,
};

SDP_PROVIDER_DEFINE(pcap_ops);
