/*
 * The `gen` device provider: a traffic generator on RX and a counting sink on TX.
 *
 *     gen:name=<ibdev>[,size=60..9000][,rate=<pps, 0 = flat out>][,flows=<n>]
 *         [,count=<frames, 0 = endless>][,src=<IPv4>][,dst=<IPv4>][,sport=<port>]
 *         [,dport=<port>][,mac=aa:bb:cc:dd:ee:ff]
 *
 * Defaults: size 60, rate 0, flows 1, count 0, src 10.0.0.1, dst 10.0.0.2, sport 1024,
 * dport 5001, mac 02:47:<hash of the name>. sport + flows - 1 must stay a port number.
 *
 * RX (one queue) produces Ethernet/IPv4/UDP frames of `size` bytes laid out as
 * sdp_gen_payload.h says, `count` of them per port_open (then nothing), at most `rate` per
 * second through a token bucket on CLOCK_MONOTONIC (a burst of two ticks at most; a tick is
 * 1/rate s, but at least 1 ms). rx_fd is a periodic timerfd at the tick when rate-limited
 * (disarmed once count frames are out) and -1 flat out.
 *
 * TX (any number of queues, each used by one thread) takes every frame and counts it; frames
 * carrying the gen magic are checked (IPv4 and UDP checksums, payload check, fill) and counted
 * good or bad. The counters belong to the open device: sdp_gen_sink_counters(), exported.
 *
 * Devices: iface name = ibdev name, PCI address ffff:02:dd.f (sdp_nic_pci_assign), link up.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_gen_payload.h"
#include "sdp_gen_frame.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "sdp_log.h"
#include "sdp_nic_decl.h"
#include "sdp_provider.h"
#include "sdp_provider_eth.h"

SDP_LOG_COMPONENT("gen");

#define GEN_MAX_RATE 100000000ull /* pps */
#define GEN_MAX_FLOWS 65536
#define GEN_MAX_TXQ 64
#define GEN_MIN_TICK_NS 1000000ull
#define GEN_MAC_TAG 0x47 /* 'G': the device */
#define GEN_SRC_TAG 0x67 /* 'g': the generator behind it */
#define NSEC 1000000000ull

struct gen_cfg {
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	uint8_t mac[6];
	uint8_t src_mac[6];
	uint32_t size;
	uint64_t rate;
	uint32_t flows;
	uint64_t count;
	uint32_t src_ip; /* network byte order */
	uint32_t dst_ip;
	uint16_t sport;
	uint16_t dport;
};

/* An open device (dev_priv). The counters are updated with __atomic adds by TX threads. */
struct gen_dev {
	struct gen_cfg cfg;
	struct sdp_gen_sink_counters sink;
	struct sdp_eth_port *port; /* the open port or NULL; guarded by g_gen_lock */
};

struct sdp_eth_port {
	struct gen_dev *dev;
	uint16_t nb_rxq;
	uint16_t nb_txq;
	uint64_t seq; /* next frame to generate */
	int timer_fd; /* -1 flat out */
	uint64_t tick_ns;
	uint64_t tokens; /* in frame-nanoseconds: one frame costs NSEC */
	uint64_t tokens_max;
	uint64_t last_ns;	    /* CLOCK_MONOTONIC of the last refill */
	uint8_t *scratch;	    /* one frame, for engine buffers smaller than size */
	struct sdp_gen_frame frame; /* the frame builder (RX ports) */
};

static pthread_mutex_t g_gen_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- declarations ---------------------------------------------------------------------------- */

static const char *const gen_keys[] = {"name", "size",	"rate",	 "flows", "count", "src",
				       "dst",  "sport", "dport", "mac",	  NULL};

static int parse_ip(const struct sdp_dev_decl *decl, const char *key, const char *def,
		    uint32_t *ip_p)
{
	const char *text = sdp_dev_decl_get(decl, key);
	struct in_addr addr;

	if (text == NULL)
		text = def;
	if (inet_pton(AF_INET, text, &addr) != 1) {
		sdp_warn("%s: %s=%s is not an IPv4 address a.b.c.d", decl->origin, key, text);
		return 0;
	}
	*ip_p = addr.s_addr;
	return 1;
}

/* Read a declaration into cfg (checked and logged here: decl_check and enumerate share it). */
static int gen_parse(const struct sdp_dev_decl *decl, struct gen_cfg *cfg)
{
	const char *name = sdp_dev_decl_get(decl, "name");
	const char *mac_text = sdp_dev_decl_get(decl, "mac");
	uint64_t size, flows, sport, dport;

	memset(cfg, 0, sizeof(*cfg));
	if (!sdp_nic_decl_keys_ok(decl, gen_keys) || !sdp_nic_decl_name_ok(decl, "name", name))
		return 0;
	if (!sdp_nic_decl_uint(decl, "size", SDP_GEN_FRAME_MIN, SDP_GEN_FRAME_MAX,
			       SDP_GEN_FRAME_MIN, &size) ||
	    !sdp_nic_decl_uint(decl, "rate", 0, GEN_MAX_RATE, 0, &cfg->rate) ||
	    !sdp_nic_decl_uint(decl, "flows", 1, GEN_MAX_FLOWS, 1, &flows) ||
	    !sdp_nic_decl_uint(decl, "count", 0, UINT64_MAX, 0, &cfg->count) ||
	    !sdp_nic_decl_uint(decl, "sport", 1, 65535, 1024, &sport) ||
	    !sdp_nic_decl_uint(decl, "dport", 1, 65535, 5001, &dport) ||
	    !parse_ip(decl, "src", "10.0.0.1", &cfg->src_ip) ||
	    !parse_ip(decl, "dst", "10.0.0.2", &cfg->dst_ip))
		return 0;
	if (sport + flows - 1 > 65535) {
		sdp_warn("%s: sport=%llu with flows=%llu runs past UDP port 65535", decl->origin,
			 (unsigned long long)sport, (unsigned long long)flows);
		return 0;
	}
	if (mac_text != NULL) {
		if (!sdp_nic_parse_mac(mac_text, cfg->mac) || (cfg->mac[0] & 1) != 0) {
			sdp_warn("%s: mac=%s is not a unicast MAC address aa:bb:cc:dd:ee:ff",
				 decl->origin, mac_text);
			return 0;
		}
	} else {
		sdp_nic_default_mac(name, GEN_MAC_TAG, cfg->mac);
	}
	sdp_nic_default_mac(name, GEN_SRC_TAG, cfg->src_mac);
	snprintf(cfg->name, sizeof(cfg->name), "%s", name);
	cfg->size = (uint32_t)size;
	cfg->flows = (uint32_t)flows;
	cfg->sport = (uint16_t)sport;
	cfg->dport = (uint16_t)dport;
	return 1;
}

static doca_error_t gen_decl_check(const struct sdp_dev_decl *decl)
{
	struct gen_cfg cfg;

	return gen_parse(decl, &cfg) ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
}

/* conf_read of sdp_nic_enumerate (decl_check accepted each declaration: this parses again). */
static doca_error_t gen_conf_read(const struct sdp_dev_decl *const *decls, size_t num_decls,
				  size_t i, void *conf)
{
	(void)num_decls;
	return gen_parse(decls[i], conf) ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
}

static const struct sdp_nic_provider gen_nic = {
	.name = "gen",
	.bus = SDP_NIC_BUS_GEN,
	.conf_size = sizeof(struct gen_cfg),
	.name_off = offsetof(struct gen_cfg, name),
	.conf_read = gen_conf_read,
};

static doca_error_t gen_enumerate(const struct sdp_dev_decl *const *decls, size_t num_decls,
				  struct sdp_devinfo_sink *sink)
{
	return sdp_nic_enumerate(&gen_nic, decls, num_decls, sink);
}

/* sdp_nic_dev_alloc copies the configuration into the start of the device */
_Static_assert(offsetof(struct gen_dev, cfg) == 0, "gen_dev must start with its gen_cfg");

static doca_error_t gen_dev_open(const struct sdp_devinfo_attr *attr, void **dev_priv)
{
	return sdp_nic_dev_alloc("gen", attr, sizeof(struct gen_dev), sizeof(struct gen_cfg),
				 dev_priv);
}

static void gen_port_close(struct sdp_eth_port *port);

static void gen_dev_close(const struct sdp_devinfo_attr *attr, void *dev_priv)
{
	struct gen_dev *dev = dev_priv;

	sdp_nic_dev_close_port("gen", attr, dev->port, gen_port_close);
	free(dev);
}

/* ---- frames ---------------------------------------------------------------------------------- */

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
}

/* -1: no gen payload; 0: an intact gen frame; 1: a gen frame that fails a check. */
static int gen_verify(const uint8_t *f, uint32_t len)
{
	struct sdp_pkt_info in;
	const uint8_t *ip, *udp, *pl;
	uint32_t udp_len, pl_len;
	uint64_t seq;

	if (len < SDP_GEN_FRAME_MIN || !sdp_pkt_parse(f, len, &in) ||
	    in.l3_off != SDP_PKT_ETH_HLEN || in.ip_ver != 4 || in.proto != SDP_PKT_PROTO_UDP ||
	    in.l4_off == 0 || in.l4_len < SDP_PKT_UDP_HLEN)
		return -1;
	ip = f + in.l3_off;
	udp = f + in.l4_off;
	udp_len = sdp_pkt_get16(udp + SDP_PKT_UDP_LEN);
	if (udp_len < SDP_PKT_UDP_HLEN + SDP_GEN_HDR_LEN || udp_len > in.l4_len)
		return -1;
	pl = udp + SDP_PKT_UDP_HLEN;
	pl_len = udp_len - SDP_PKT_UDP_HLEN;
	if (sdp_pkt_get32(pl + SDP_GEN_OFF_MAGIC) != SDP_GEN_MAGIC)
		return -1;

	if (!sdp_pkt_ip4_csum_ok(ip))
		return 1;
	if (sdp_pkt_get16(udp + SDP_PKT_UDP_CSUM) != 0 &&
	    !sdp_pkt_l4_csum_ok(udp, udp_len,
				sdp_pkt_pseudo_sum(ip, 4, SDP_PKT_PROTO_UDP, udp_len)))
		return 1;
	if (sdp_pkt_get32(pl + SDP_GEN_OFF_CHECK) !=
	    sdp_gen_check(pl + SDP_GEN_OFF_MAGIC, pl_len - SDP_GEN_OFF_MAGIC))
		return 1;
	seq = (uint64_t)sdp_pkt_get32(pl + SDP_GEN_OFF_SEQ) << 32 |
	      sdp_pkt_get32(pl + SDP_GEN_OFF_SEQ + 4);
	for (uint32_t k = SDP_GEN_HDR_LEN; k < pl_len; k++)
		if (pl[k] != (uint8_t)(seq + k))
			return 1;
	return 0;
}

/* ---- port ops -------------------------------------------------------------------------------- */

static doca_error_t gen_port_open(void *dev_priv, const struct sdp_eth_port_cfg *cfg,
				  struct sdp_eth_port **port_p, struct sdp_eth_port_info *info_p)
{
	struct gen_dev *dev = dev_priv;
	struct sdp_eth_port *port;
	doca_error_t status;

	if (dev == NULL || cfg == NULL || port_p == NULL || info_p == NULL) {
		sdp_error("invalid argument: dev %p, cfg %p, port_p %p, info_p %p", dev_priv,
			  (const void *)cfg, (void *)port_p, (void *)info_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (cfg->nb_rxq == 0 && cfg->nb_txq == 0) {
		sdp_error("gen device %s: a port needs at least one RX or TX queue", dev->cfg.name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	port = calloc(1, sizeof(*port));
	if (port == NULL) {
		sdp_error("failed to allocate a port of gen device %s", dev->cfg.name);
		return DOCA_ERROR_NO_MEMORY;
	}
	port->dev = dev;
	port->nb_rxq = cfg->nb_rxq ? 1 : 0;
	port->nb_txq = cfg->nb_txq < GEN_MAX_TXQ ? cfg->nb_txq : GEN_MAX_TXQ;
	port->timer_fd = -1;
	port->scratch = malloc(dev->cfg.size);
	if (port->scratch == NULL) {
		sdp_error("failed to allocate a frame of %u bytes for gen device %s", dev->cfg.size,
			  dev->cfg.name);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_free_port;
	}
	if (port->nb_rxq != 0)
		/* the tables of frames of this size (gen_parse checked the size and flows) */
		sdp_gen_frame_init(&port->frame, dev->cfg.size, dev->cfg.mac, dev->cfg.src_mac,
				   dev->cfg.src_ip, dev->cfg.dst_ip, dev->cfg.sport, dev->cfg.dport,
				   dev->cfg.flows);
	if (dev->cfg.rate != 0 && port->nb_rxq != 0) {
		struct itimerspec its = {0};

		port->tick_ns = NSEC / dev->cfg.rate;
		if (port->tick_ns < GEN_MIN_TICK_NS)
			port->tick_ns = GEN_MIN_TICK_NS;
		/* two ticks' worth at most, and at least one frame */
		port->tokens_max = 2 * port->tick_ns * dev->cfg.rate;
		if (port->tokens_max < NSEC)
			port->tokens_max = NSEC;
		port->tokens = NSEC;
		port->last_ns = now_ns(CLOCK_MONOTONIC);
		port->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (port->timer_fd < 0) {
			sdp_error("gen device %s: timerfd_create failed: %m", dev->cfg.name);
			status = errno == ENOMEM ? DOCA_ERROR_NO_MEMORY :
						   DOCA_ERROR_OPERATING_SYSTEM;
			goto err_free_scratch;
		}
		its.it_interval.tv_sec = (time_t)(port->tick_ns / NSEC);
		its.it_interval.tv_nsec = (long)(port->tick_ns % NSEC);
		/* the first frame is there at once: fire at once (1 ns) */
		its.it_value.tv_nsec = 1;
		if (timerfd_settime(port->timer_fd, 0, &its, NULL) != 0) {
			sdp_error("gen device %s: timerfd_settime failed: %m", dev->cfg.name);
			status = DOCA_ERROR_OPERATING_SYSTEM;
			goto err_close_timer;
		}
	}
	pthread_mutex_lock(&g_gen_lock);
	if (dev->port != NULL) {
		pthread_mutex_unlock(&g_gen_lock);
		sdp_error("gen device %s already has an open port", dev->cfg.name);
		status = DOCA_ERROR_IN_USE;
		goto err_close_timer;
	}
	dev->port = port;
	pthread_mutex_unlock(&g_gen_lock);
	memset(info_p, 0, sizeof(*info_p));
	info_p->nb_rxq = port->nb_rxq;
	info_p->nb_txq = port->nb_txq;
	info_p->mtu = dev->cfg.size - 14 > 1500 ? dev->cfg.size - 14 : 1500;
	memcpy(info_p->mac, dev->cfg.mac, sizeof(info_p->mac));
	info_p->has_rx_fd = port->timer_fd >= 0;
	*port_p = port;
	sdp_debug("gen device %s: port open, %u RX / %u TX queues, %u-byte frames, rate %llu",
		  dev->cfg.name, port->nb_rxq, port->nb_txq, dev->cfg.size,
		  (unsigned long long)dev->cfg.rate);
	return DOCA_SUCCESS;

err_close_timer:
	if (port->timer_fd >= 0)
		close(port->timer_fd);
err_free_scratch:
	free(port->scratch);
err_free_port:
	free(port);
	return status;
}

static void gen_port_close(struct sdp_eth_port *port)
{
	if (port == NULL)
		return;
	sdp_debug("gen device %s: port closed after %llu frames generated", port->dev->cfg.name,
		  (unsigned long long)port->seq);
	pthread_mutex_lock(&g_gen_lock);
	port->dev->port = NULL;
	pthread_mutex_unlock(&g_gen_lock);
	if (port->timer_fd >= 0)
		close(port->timer_fd);
	free(port->scratch);
	free(port);
}

/* How many frames the token bucket allows now (at most n). */
static uint16_t gen_allowance(struct sdp_eth_port *port, uint16_t n)
{
	uint64_t now, elapsed, frames;
	uint64_t expirations;

	if (port->timer_fd < 0)
		return n;
	/* clear the timer's readability: the engine polled it to come here */
	if (read(port->timer_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		sdp_error("gen device %s: read of timerfd failed: %m", port->dev->cfg.name);
	now = now_ns(CLOCK_MONOTONIC);
	elapsed = now - port->last_ns;
	if (elapsed > NSEC)
		elapsed = NSEC;
	port->last_ns = now;
	port->tokens += elapsed * port->dev->cfg.rate;
	if (port->tokens > port->tokens_max)
		port->tokens = port->tokens_max;
	frames = port->tokens / NSEC;
	return frames < n ? (uint16_t)frames : n;
}

static uint16_t gen_rx_burst(struct sdp_eth_port *port, uint16_t q, struct sdp_pkt *pkts,
			     uint16_t n)
{
	const struct gen_cfg *cfg;
	uint64_t ts;
	uint16_t allowed;

	if (port == NULL || pkts == NULL || q >= port->nb_rxq) {
		sdp_error("gen rx_burst: port %p, pkts %p, queue %u of %u", (void *)port,
			  (void *)pkts, q, port ? port->nb_rxq : 0);
		return 0;
	}
	cfg = &port->dev->cfg;
	if (cfg->count != 0 && port->seq >= cfg->count)
		return 0;
	if (cfg->count != 0 && cfg->count - port->seq < n)
		n = (uint16_t)(cfg->count - port->seq);
	allowed = gen_allowance(port, n);
	ts = now_ns(CLOCK_REALTIME);
	for (uint16_t i = 0; i < allowed; i++) {
		struct sdp_pkt *pkt = &pkts[i];

		if (pkt->data != NULL && pkt->cap >= cfg->size) {
			sdp_gen_frame_build(&port->frame, port->seq, pkt->data);
			pkt->len = cfg->size;
			pkt->flags = 0;
		} else {
			sdp_gen_frame_build(&port->frame, port->seq, port->scratch);
			pkt->len = pkt->data != NULL ? pkt->cap : 0;
			if (pkt->len != 0)
				memcpy(pkt->data, port->scratch, pkt->len);
			pkt->flags = SDP_PKT_F_TRUNCATED;
		}
		pkt->wire_len = cfg->size;
		pkt->ts_ns = ts;
		port->seq++;
	}
	if (port->timer_fd >= 0) {
		port->tokens -= (uint64_t)allowed * NSEC;
		if (cfg->count != 0 && port->seq >= cfg->count) {
			struct itimerspec off = {0};

			/* all out: the fd goes quiet so the engine sleeps */
			if (timerfd_settime(port->timer_fd, 0, &off, NULL) != 0)
				sdp_error("gen device %s: timerfd_settime failed: %m", cfg->name);
		}
	}
	return allowed;
}

static uint16_t gen_tx_burst(struct sdp_eth_port *port, uint16_t q, const struct sdp_pkt *pkts,
			     uint16_t n)
{
	struct sdp_gen_sink_counters c = {0};

	if (port == NULL || pkts == NULL || q >= port->nb_txq) {
		sdp_error("gen tx_burst: port %p, pkts %p, queue %u of %u", (void *)port,
			  (const void *)pkts, q, port ? port->nb_txq : 0);
		return 0;
	}
	for (uint16_t i = 0; i < n; i++) {
		int verdict = pkts[i].data != NULL ? gen_verify(pkts[i].data, pkts[i].len) : -1;

		c.frames++;
		c.bytes += pkts[i].len;
		c.gen_ok += verdict == 0;
		c.gen_bad += verdict == 1;
	}
	__atomic_add_fetch(&port->dev->sink.frames, c.frames, __ATOMIC_RELAXED);
	__atomic_add_fetch(&port->dev->sink.bytes, c.bytes, __ATOMIC_RELAXED);
	__atomic_add_fetch(&port->dev->sink.gen_ok, c.gen_ok, __ATOMIC_RELAXED);
	__atomic_add_fetch(&port->dev->sink.gen_bad, c.gen_bad, __ATOMIC_RELAXED);
	return n;
}

static int gen_rx_fd(struct sdp_eth_port *port, uint16_t q)
{
	return port != NULL && q < port->nb_rxq ? port->timer_fd : -1;
}

static int gen_tx_fd(struct sdp_eth_port *port, uint16_t q)
{
	(void)port;
	(void)q;
	return -1; /* the sink is never full */
}

static int gen_link_up(struct sdp_eth_port *port)
{
	return port != NULL;
}

static const struct sdp_eth_port_ops gen_eth_ops = {
	.port_open = gen_port_open,
	.port_close = gen_port_close,
	.rx_burst = gen_rx_burst,
	.tx_burst = gen_tx_burst,
	.rx_fd = gen_rx_fd,
	.tx_fd = gen_tx_fd,
	.link_up = gen_link_up,
};

static const struct sdp_provider_ops gen_ops = {
	.abi_version = SDP_PROVIDER_ABI_VERSION,
	.name = "gen",
	.decl_check = gen_decl_check,
	.enumerate = gen_enumerate,
	.dev_open = gen_dev_open,
	.dev_close = gen_dev_close,
	.devinfo_free = free,
	.eth = &gen_eth_ops,
};

SDP_PROVIDER_DEFINE(gen_ops);

/* ---- the sink counters query (sdp_gen_payload.h) --------------------------------------------- */

__attribute__((visibility("default"))) doca_error_t
sdp_gen_sink_counters(const struct doca_dev *dev, struct sdp_gen_sink_counters *counters_p);

doca_error_t sdp_gen_sink_counters(const struct doca_dev *dev,
				   struct sdp_gen_sink_counters *counters_p)
{
	struct gen_dev *gdev;

	if (dev == NULL || counters_p == NULL || sdp_dev_get_provider_ops(dev) != &gen_ops) {
		sdp_error("dev %p (%s), counters_p %p", (const void *)dev,
			  dev == NULL ? "NULL" : "not an open gen device", (void *)counters_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	gdev = sdp_dev_get_priv(dev);
	counters_p->frames = __atomic_load_n(&gdev->sink.frames, __ATOMIC_RELAXED);
	counters_p->bytes = __atomic_load_n(&gdev->sink.bytes, __ATOMIC_RELAXED);
	counters_p->gen_ok = __atomic_load_n(&gdev->sink.gen_ok, __ATOMIC_RELAXED);
	counters_p->gen_bad = __atomic_load_n(&gdev->sink.gen_bad, __ATOMIC_RELAXED);
	return DOCA_SUCCESS;
}
