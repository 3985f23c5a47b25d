/*
 * softdpu's GPU packet processing application, modelled on DOCA's: receive queues per protocol
 * steered by DOCA Flow (UDP, TCP to the HTTP port, ICMP; everything else to a queue of its own),
 * answers from the protocol functions of gpp_proto.h (ICMP echo, DNS-like queries counted, a
 * minimal HTTP/1.1 server), a statistics line per second, a clean stop on SIGINT/SIGTERM in the
 * seeds' rollback order (flow entries and pipes, flow port, queues, PE, memory, device).
 *
 *   gpu_packet_processing -d <device> -a <IPv4 address> [-m <MAC>] [-t seconds] [-g <GPU PCIe>]
 *                         [-p http-port] [-u udp-port] [-c]
 *
 * -d names the NIC device (ibdev name, e.g. an afpacket or afxdp device declared in
 * SOFTDPU_DEVICES); -a is the address the application answers for; -m its MAC (default: the
 * interface's, from /sys/class/net/<iface>/address); -t stops it after that many seconds (0:
 * until a signal). By default the UDP, TCP and ICMP queues are GPU queues served by persistent
 * kernels (gpp_gpu.h; -g picks the GPU, default CUDA device 0) that hand their counts to a
 * statistics thread through semaphores; everything else goes to a CPU queue. -c runs the same
 * protocol functions on the CPU instead (no GPU needed). A build without CUDA has only -c.
 *
 * Output: "gpp: <n> s udp <q/s> tcp <p/s> icmp <p/s> other <p/s>" every second, and at the end
 * one line "gpp totals: udp_queries=N icmp_replies=N http_requests=N http_replies=N
 * tcp_segments=N other=N sent=N send_errors=N". Exit status 0, 1 on an error (logged).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_eth_rxq.h>
#include <doca_eth_rxq_cpu_data_path.h>
#include <doca_eth_txq.h>
#include <doca_eth_txq_cpu_data_path.h>
#include <doca_flow.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#include "gpp_pages.h"
#include "gpp_proto.h"
#ifdef GPP_WITH_GPU
#include "gpp_gpu_host.h"
#endif

DOCA_LOG_REGISTER(GPP);

#define GPP_SLOT 2048u
#define GPP_RX_TASKS 128u /* per queue */
#define GPP_TX_SLOTS 256u
#define GPP_IDLE_NS 50000L /* sleep when a progress call found nothing */

enum {
	Q_OTHER,
	Q_UDP,
	Q_TCP,
	Q_ICMP,
	Q_NUM
};
static const char *const q_name[Q_NUM] = {"other", "udp", "tcp", "icmp"};

static const char gpp_index[] = GPP_PAGE_INDEX;
static const char gpp_hello[] = GPP_PAGE_HELLO;
static const struct gpp_page gpp_pages[] = {
	{"/index.html", "text/html", gpp_index, sizeof(gpp_index) - 1},
	{"/", "text/html", gpp_index, sizeof(gpp_index) - 1},
	{"/hello.txt", "text/plain", gpp_hello, sizeof(gpp_hello) - 1},
};

struct gpp_app {
	struct gpp_host host;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	size_t mem_len;
	struct doca_eth_rxq *rxq[Q_NUM];
	struct doca_eth_txq *txq;
	uint8_t tx_busy[GPP_TX_SLOTS];
	struct doca_flow_port *port;
	struct doca_flow_pipe *root;
	struct doca_flow_pipe_entry *entries[3];
	uint64_t pkts[Q_NUM];
	uint64_t udp_queries, icmp_replies, http_requests, http_replies, sent, send_errors;
	uint64_t tx_full;
	int gpu_mode;	     /* the UDP/TCP/ICMP queues are the GPU's (gpp_gpu) */
	struct gpp_gpu *gpu; /* GPU mode */
};

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

/* ---- sending --------------------------------------------------------------------------------- */

static void tx_done(struct doca_eth_txq_task_send *task, union doca_data task_user_data,
		    union doca_data ctx_user_data, int ok)
{
	struct gpp_app *app = ctx_user_data.ptr;
	struct doca_buf *pkt = NULL;

	if (ok)
		app->sent++;
	else
		app->send_errors++;
	app->tx_busy[task_user_data.u64] = 0;
	if (doca_eth_txq_task_send_get_pkt(task, &pkt) == DOCA_SUCCESS && pkt != NULL)
		doca_buf_dec_refcount(pkt, NULL);
	doca_task_free(doca_eth_txq_task_send_as_doca_task(task));
}

static void tx_ok(struct doca_eth_txq_task_send *task, union doca_data t, union doca_data c)
{
	tx_done(task, t, c, 1);
}

static void tx_err(struct doca_eth_txq_task_send *task, union doca_data t, union doca_data c)
{
	tx_done(task, t, c, 0);
}

/* Send len bytes already written into slot s of the TX area. A full queue drops the reply. */
static void tx_send(struct gpp_app *app, uint32_t s, uint32_t len)
{
	uint8_t *p = app->mem + (size_t)(Q_NUM * GPP_RX_TASKS + s) * GPP_SLOT;
	struct doca_eth_txq_task_send *task = NULL;
	struct doca_buf *buf = NULL;

	if (doca_buf_inventory_buf_get_by_data(app->inv, app->mmap, p, len, &buf) != DOCA_SUCCESS)
		goto err;
	if (doca_eth_txq_task_send_allocate_init(app->txq, buf, (union doca_data){.u64 = s},
						 &task) != DOCA_SUCCESS) {
		doca_buf_dec_refcount(buf, NULL);
		goto err;
	}
	app->tx_busy[s] = 1;
	if (doca_task_submit(doca_eth_txq_task_send_as_doca_task(task)) != DOCA_SUCCESS) {
		app->tx_busy[s] = 0;
		doca_task_free(doca_eth_txq_task_send_as_doca_task(task));
		doca_buf_dec_refcount(buf, NULL);
		goto err;
	}
	return;
err:
	app->send_errors++;
}

/* A free TX slot, or -1 (the reply is dropped and counted, as a full NIC queue would). */
static int tx_slot(struct gpp_app *app)
{
	for (uint32_t s = 0; s < GPP_TX_SLOTS; s++)
		if (!app->tx_busy[s])
			return (int)s;
	app->tx_full++;
	return -1;
}

/* ---- receiving: the work of the kernels, on the CPU ------------------------------------------ */

static void handle(struct gpp_app *app, int q, const uint8_t *f, uint32_t len, int l4_ok)
{
	int s = tx_slot(app);
	uint8_t *out;
	uint32_t n = 0;

	__atomic_fetch_add(&app->pkts[q], 1, __ATOMIC_RELAXED); /* the stats thread reads it */
	if (q == Q_OTHER)
		return;
	if (s < 0)
		return;
	out = app->mem + (size_t)(Q_NUM * GPP_RX_TASKS + (uint32_t)s) * GPP_SLOT;
	switch (q) {
	case Q_UDP:
		app->udp_queries += (uint64_t)gpp_udp_query(&app->host, f, len);
		break;
	case Q_ICMP:
		n = gpp_icmp_echo(&app->host, f, len, out, GPP_SLOT);
		app->icmp_replies += n != 0;
		break;
	case Q_TCP:
		n = gpp_http(&app->host, gpp_pages, sizeof(gpp_pages) / sizeof(gpp_pages[0]), f,
			     len, l4_ok, out, GPP_SLOT);
		if (gpp_tcp_reply_has_data(out, n)) {
			app->http_requests++;
			app->http_replies++;
		}
		break;
	default:
		break;
	}
	if (n != 0)
		tx_send(app, (uint32_t)s, n);
}

static void rx_ok(struct doca_eth_rxq_task_recv *task, union doca_data task_user_data,
		  union doca_data ctx_user_data)
{
	struct gpp_app *app = ctx_user_data.ptr;
	struct doca_buf *pkt = NULL;
	void *data = NULL;
	size_t len = 0;
	uint8_t l4_ok = 0;

	/* the NIC's verdict on the transport checksum (a sender's offloaded one counts as good) */
	if (doca_eth_rxq_task_recv_get_l4_ok(task, &l4_ok) != DOCA_SUCCESS)
		l4_ok = 0;
	if (doca_eth_rxq_task_recv_get_pkt(task, &pkt) == DOCA_SUCCESS && pkt != NULL &&
	    doca_buf_get_data(pkt, &data) == DOCA_SUCCESS &&
	    doca_buf_get_data_len(pkt, &len) == DOCA_SUCCESS)
		handle(app, (int)task_user_data.u64, data, (uint32_t)len, l4_ok ? 1 : 0);
	if (pkt != NULL)
		doca_buf_reset_data_len(pkt);
	if (g_stop || doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(task)) != DOCA_SUCCESS) {
		doca_task_free(doca_eth_rxq_task_recv_as_doca_task(task));
		if (pkt != NULL)
			doca_buf_dec_refcount(pkt, NULL);
	}
}

static void rx_err(struct doca_eth_rxq_task_recv *task, union doca_data task_user_data,
		   union doca_data ctx_user_data)
{
	struct doca_buf *pkt = NULL;

	(void)task_user_data;
	(void)ctx_user_data;
	/* the stop flush (IO_FAILED) and errors alike: the task and its buffer go */
	if (doca_eth_rxq_task_recv_get_pkt(task, &pkt) != DOCA_SUCCESS)
		pkt = NULL;
	doca_task_free(doca_eth_rxq_task_recv_as_doca_task(task));
	if (pkt != NULL)
		doca_buf_dec_refcount(pkt, NULL);
}

/* ---- set-up and rollback --------------------------------------------------------------------- */

static struct doca_dev *open_dev(const char *name, char *iface, size_t iface_len)
{
	struct doca_devinfo **list = NULL;
	struct doca_dev *dev = NULL;
	uint32_t n = 0;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
		return NULL;
	for (uint32_t i = 0; i < n && dev == NULL; i++) {
		char ib[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";

		if (doca_devinfo_get_ibdev_name(list[i], ib, sizeof(ib)) != DOCA_SUCCESS ||
		    strcmp(ib, name) != 0)
			continue;
		if (doca_devinfo_get_iface_name(list[i], iface, iface_len) != DOCA_SUCCESS)
			iface[0] = '\0';
		if (doca_dev_open(list[i], &dev) != DOCA_SUCCESS)
			dev = NULL;
	}
	doca_devinfo_destroy_list(list);
	if (dev == NULL)
		DOCA_LOG_ERR("device %s not found or not openable (SOFTDPU_DEVICES declares them)",
			     name);
	return dev;
}

static int read_mac(const char *iface, uint8_t mac[6])
{
	char path[128];
	unsigned int m[6];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", iface);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	n = fscanf(f, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]);
	fclose(f);
	for (int i = 0; i < 6 && n == 6; i++)
		mac[i] = (uint8_t)m[i];
	return n == 6 ? 0 : -1;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int m[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (m[i] > 255)
			return -1;
		mac[i] = (uint8_t)m[i];
	}
	return 0;
}

#define TRY(call)                                                                                  \
	do {                                                                                       \
		doca_error_t st_ = (call);                                                         \
		if (st_ != DOCA_SUCCESS) {                                                         \
			DOCA_LOG_ERR("%s: %s", #call, doca_error_get_descr(st_));                  \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

static int queues_start(struct gpp_app *app)
{
	app->mem_len = (size_t)(Q_NUM * GPP_RX_TASKS + GPP_TX_SLOTS) * GPP_SLOT;
	app->mem = aligned_alloc(4096, app->mem_len);
	if (app->mem == NULL)
		return -1;
	TRY(doca_mmap_create(&app->mmap));
	TRY(doca_mmap_add_dev(app->mmap, app->dev));
	TRY(doca_mmap_set_memrange(app->mmap, app->mem, app->mem_len));
	TRY(doca_mmap_set_permissions(app->mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	TRY(doca_mmap_start(app->mmap));
	TRY(doca_buf_inventory_create(Q_NUM * GPP_RX_TASKS + GPP_TX_SLOTS, &app->inv));
	TRY(doca_buf_inventory_start(app->inv));
	TRY(doca_pe_create(&app->pe));
	/* the "other" queue first: frames no rule takes go to the first queue started; in GPU
	 * mode it is the only CPU queue (gpp_gpu has the others, and the send queues) */
	for (int q = 0; q < (app->gpu_mode ? 1 : Q_NUM); q++) {
		struct doca_ctx *ctx;

		TRY(doca_eth_rxq_create(app->dev, GPP_RX_TASKS, GPP_SLOT, &app->rxq[q]));
		TRY(doca_eth_rxq_set_type(app->rxq[q], DOCA_ETH_RXQ_TYPE_REGULAR));
		TRY(doca_eth_rxq_task_recv_set_conf(app->rxq[q], rx_ok, rx_err, GPP_RX_TASKS));
		ctx = doca_eth_rxq_as_doca_ctx(app->rxq[q]);
		TRY(doca_ctx_set_user_data(ctx, (union doca_data){.ptr = app}));
		TRY(doca_pe_connect_ctx(app->pe, ctx));
		TRY(doca_ctx_start(ctx));
		for (uint32_t i = 0; i < GPP_RX_TASKS; i++) {
			struct doca_eth_rxq_task_recv *t = NULL;
			struct doca_buf *buf = NULL;

			TRY(doca_buf_inventory_buf_get_by_addr(
				app->inv, app->mmap,
				app->mem + (size_t)(q * GPP_RX_TASKS + i) * GPP_SLOT, GPP_SLOT,
				&buf));
			TRY(doca_eth_rxq_task_recv_allocate_init(
				app->rxq[q], buf, (union doca_data){.u64 = (uint64_t)q}, &t));
			TRY(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(t)));
		}
		if (q != Q_OTHER)
			TRY(doca_eth_rxq_apply_queue_id(app->rxq[q], (uint16_t)q));
	}
	if (app->gpu_mode)
		return 0;
	TRY(doca_eth_txq_create(app->dev, GPP_TX_SLOTS, &app->txq));
	TRY(doca_eth_txq_set_type(app->txq, DOCA_ETH_TXQ_TYPE_REGULAR));
	TRY(doca_eth_txq_task_send_set_conf(app->txq, tx_ok, tx_err, GPP_TX_SLOTS));
	TRY(doca_ctx_set_user_data(doca_eth_txq_as_doca_ctx(app->txq),
				   (union doca_data){.ptr = app}));
	TRY(doca_pe_connect_ctx(app->pe, doca_eth_txq_as_doca_ctx(app->txq)));
	TRY(doca_ctx_start(doca_eth_txq_as_doca_ctx(app->txq)));
	return 0;
}

/* Root control pipe: UDP, TCP to the HTTP port and ICMP, each to its queue (by applied id). */
static int flow_start(struct gpp_app *app)
{
	static uint16_t qid[3] = {Q_UDP, Q_TCP, Q_ICMP};
	struct doca_flow_cfg *cfg = NULL;
	struct doca_flow_port_cfg *pcfg = NULL;
	struct doca_flow_pipe_cfg *pipe_cfg = NULL;

	TRY(doca_flow_cfg_create(&cfg));
	TRY(doca_flow_cfg_set_pipe_queues(cfg, 1));
	TRY(doca_flow_cfg_set_mode_args(cfg, "vnf,hws"));
	TRY(doca_flow_init(cfg));
	TRY(doca_flow_cfg_destroy(cfg));
	TRY(doca_flow_port_cfg_create(&pcfg));
	TRY(doca_flow_port_cfg_set_port_id(pcfg, 0));
	TRY(doca_flow_port_cfg_set_dev(pcfg, app->dev));
	TRY(doca_flow_port_start(pcfg, &app->port));
	TRY(doca_flow_port_cfg_destroy(pcfg));
	TRY(doca_flow_pipe_cfg_create(&pipe_cfg, app->port));
	TRY(doca_flow_pipe_cfg_set_name(pipe_cfg, "GPP_ROOT"));
	TRY(doca_flow_pipe_cfg_set_type(pipe_cfg, DOCA_FLOW_PIPE_CONTROL));
	TRY(doca_flow_pipe_cfg_set_is_root(pipe_cfg, true));
	TRY(doca_flow_pipe_create(pipe_cfg, NULL, NULL, &app->root));
	TRY(doca_flow_pipe_cfg_destroy(pipe_cfg));
	for (int k = 0; k < 3; k++) {
		struct doca_flow_match m;
		struct doca_flow_fwd fwd;

		memset(&m, 0, sizeof(m));
		memset(&fwd, 0, sizeof(fwd));
		m.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV4;
		m.parser_meta.outer_l4_type = k == 0 ? DOCA_FLOW_L4_META_UDP :
					      k == 1 ? DOCA_FLOW_L4_META_TCP :
						       DOCA_FLOW_L4_META_ICMP;
		if (k == 1) {
			m.outer.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_TCP;
			m.outer.tcp.l4_port.dst_port = htons(app->host.http_port);
		}
		fwd.type = DOCA_FLOW_FWD_RSS;
		fwd.rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
		fwd.rss.queues_array = &qid[k];
		fwd.rss.nr_queues = 1;
		TRY(doca_flow_pipe_control_add_entry(0, app->root, &m, NULL, NULL, NULL, NULL, NULL,
						     NULL, (uint32_t)k, &fwd, NULL,
						     &app->entries[k]));
	}
	TRY(doca_flow_entries_process(app->port, 0, 0, 0));
	return 0;
}

/* The seeds' rollback order: flow entries and pipes, flow port, queues, PE, memory, device. */
static void rollback(struct gpp_app *app)
{
	struct timespec nap = {0, 1000000};

	for (int k = 0; k < 3; k++)
		if (app->entries[k] != NULL)
			doca_flow_pipe_remove_entry(0, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT,
						    app->entries[k]);
	if (app->root != NULL)
		doca_flow_pipe_destroy(app->root);
	if (app->port != NULL)
		doca_flow_port_stop(app->port);
	doca_flow_destroy();
	for (int q = 0; q < Q_NUM + 1; q++) {
		struct doca_ctx *ctx =
			q < Q_NUM ? (app->rxq[q] != NULL ? doca_eth_rxq_as_doca_ctx(app->rxq[q]) :
							   NULL) :
				    (app->txq != NULL ? doca_eth_txq_as_doca_ctx(app->txq) : NULL);
		enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;

		if (ctx == NULL)
			continue;
		(void)doca_ctx_stop(ctx);
		/* bounded: 5 s for the flushed tasks to come back */
		for (int i = 0; i < 5000; i++) {
			if (doca_ctx_get_state(ctx, &st) != DOCA_SUCCESS ||
			    st == DOCA_CTX_STATE_IDLE)
				break;
			if (!doca_pe_progress(app->pe))
				nanosleep(&nap, NULL);
		}
		if (st != DOCA_CTX_STATE_IDLE)
			DOCA_LOG_WARN("queue %d did not stop within 5 s", q);
	}
#ifdef GPP_WITH_GPU
	gpp_gpu_queues_destroy(app->gpu);
#endif
	for (int q = 0; q < Q_NUM; q++)
		if (app->rxq[q] != NULL)
			doca_eth_rxq_destroy(app->rxq[q]);
	if (app->txq != NULL)
		doca_eth_txq_destroy(app->txq);
	if (app->pe != NULL)
		doca_pe_destroy(app->pe);
	if (app->inv != NULL) {
		doca_buf_inventory_stop(app->inv);
		doca_buf_inventory_destroy(app->inv);
	}
	if (app->mmap != NULL) {
		doca_mmap_stop(app->mmap);
		doca_mmap_destroy(app->mmap);
	}
	free(app->mem);
#ifdef GPP_WITH_GPU
	gpp_gpu_close(app->gpu); /* semaphores, GPU memory, the GPU */
	app->gpu = NULL;
#endif
	if (app->dev != NULL)
		doca_dev_close(app->dev);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr, "usage: gpu_packet_processing -d <device> -a <IPv4> [-m <MAC>] "
			"[-t seconds] [-p http-port] [-u udp-port] [-g <GPU PCIe> | -c]\n");
}

/* A port number 1..65535 from s, or 0. */
static uint16_t parse_port(const char *s)
{
	char *end = NULL;
	unsigned long v = strtoul(s, &end, 10);

	return end != s && *end == '\0' && v > 0 && v <= 65535 ? (uint16_t)v : 0;
}

#ifdef GPP_WITH_GPU
/* The GPU mode's part of the start: the GPU, its queues (ids Q_UDP, Q_TCP, Q_ICMP). */
static int gpu_start(struct gpp_app *app, const char *gpu_pcie)
{
	static const uint16_t qid[GPP_GPU_NB] = {Q_UDP, Q_TCP, Q_ICMP};

	return gpp_gpu_open(gpu_pcie, &app->gpu) == DOCA_SUCCESS &&
			       gpp_gpu_queues_start(app->gpu, app->dev, qid) == DOCA_SUCCESS ?
		       0 :
		       -1;
}
#endif

static void print_totals(struct gpp_app *app)
{
	uint64_t other = __atomic_load_n(&app->pkts[Q_OTHER], __ATOMIC_RELAXED);

#ifdef GPP_WITH_GPU
	if (app->gpu_mode) {
		struct gpp_gpu_total t[GPP_GPU_NB];
		uint64_t sent = 0, errors = 0;

		memset(t, 0, sizeof(t));
		if (app->gpu != NULL)
			gpp_gpu_totals(app->gpu, t);
		for (int p = 0; p < GPP_GPU_NB; p++) {
			sent += t[p].sent;
			errors += t[p].send_errors;
		}
		/* stateless HTTP: every response answers one request */
		printf("gpp totals: udp_queries=%llu icmp_replies=%llu http_requests=%llu "
		       "http_replies=%llu tcp_segments=%llu other=%llu sent=%llu send_errors=%llu "
		       "tx_full=0 udp_packets=%llu icmp_packets=%llu\n",
		       (unsigned long long)t[GPP_GPU_UDP].udp_queries,
		       (unsigned long long)t[GPP_GPU_ICMP].icmp_replies,
		       (unsigned long long)t[GPP_GPU_TCP].http_replies,
		       (unsigned long long)t[GPP_GPU_TCP].http_replies,
		       (unsigned long long)t[GPP_GPU_TCP].pkts, (unsigned long long)other,
		       (unsigned long long)sent, (unsigned long long)errors,
		       (unsigned long long)t[GPP_GPU_UDP].pkts,
		       (unsigned long long)t[GPP_GPU_ICMP].pkts);
		return;
	}
#endif
	printf("gpp totals: udp_queries=%llu icmp_replies=%llu http_requests=%llu "
	       "http_replies=%llu tcp_segments=%llu other=%llu sent=%llu send_errors=%llu "
	       "tx_full=%llu udp_packets=%llu icmp_packets=%llu\n",
	       (unsigned long long)app->udp_queries, (unsigned long long)app->icmp_replies,
	       (unsigned long long)app->http_requests, (unsigned long long)app->http_replies,
	       (unsigned long long)app->pkts[Q_TCP], (unsigned long long)other,
	       (unsigned long long)app->sent, (unsigned long long)app->send_errors,
	       (unsigned long long)app->tx_full, (unsigned long long)app->pkts[Q_UDP],
	       (unsigned long long)app->pkts[Q_ICMP]);
}

int main(int argc, char **argv)
{
	static struct gpp_app app; /* large: not on the stack */
	const char *devname = NULL, *addr = NULL, *mac = NULL, *gpu_pcie = NULL;
	struct doca_log_backend *sdk = NULL;
	struct sigaction sa;
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE] = "";
	char *end = NULL;
	double start, next, limit = 0;
	uint64_t last[Q_NUM] = {0};
	int c, cpu = 0, rc = 1;

	app.host.http_port = 80;
	app.host.udp_port = 53;
	while ((c = getopt(argc, argv, "d:a:m:t:p:u:g:ch")) != -1) {
		switch (c) {
		case 'd':
			devname = optarg;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'm':
			mac = optarg;
			break;
		case 't':
			limit = strtod(optarg, &end);
			if (end == optarg || *end != '\0')
				limit = -1;
			break;
		case 'p':
			app.host.http_port = parse_port(optarg);
			break;
		case 'u':
			app.host.udp_port = parse_port(optarg);
			break;
		case 'g':
			gpu_pcie = optarg;
			break;
		case 'c':
			cpu = 1;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (devname == NULL || addr == NULL || inet_pton(AF_INET, addr, app.host.ip) != 1 ||
	    !(limit >= 0) || app.host.http_port == 0 || app.host.udp_port == 0 ||
	    (cpu && gpu_pcie != NULL) || optind != argc) {
		usage();
		return 2;
	}
#ifndef GPP_WITH_GPU
	if (!cpu) {
		fprintf(stderr,
			"gpu_packet_processing: this build has no CUDA (meson -Dcuda=enabled "
			"builds the GPU mode); -c runs the same processing on the CPU\n");
		return 2;
	}
#endif
	app.gpu_mode = !cpu;
	doca_log_backend_create_standard();
	if (doca_log_backend_create_with_file_sdk(stderr, &sdk) == DOCA_SUCCESS)
		doca_log_backend_set_sdk_level(sdk, DOCA_LOG_LEVEL_WARNING);
	app.dev = open_dev(devname, iface, sizeof(iface));
	if (app.dev == NULL)
		return 1;
	if ((mac != NULL ? parse_mac(mac, app.host.mac) : read_mac(iface, app.host.mac)) != 0) {
		DOCA_LOG_ERR("no MAC for %s (interface '%s'): give one with -m", devname, iface);
		goto out;
	}
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		app.host.isn_key = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec ^ (uint32_t)getpid();
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (queues_start(&app) != 0)
		goto out;
#ifdef GPP_WITH_GPU
	if (app.gpu_mode && gpu_start(&app, gpu_pcie) != 0)
		goto out;
#endif
	if (flow_start(&app) != 0)
		goto out;
#ifdef GPP_WITH_GPU
	if (app.gpu_mode && gpp_gpu_launch(app.gpu, &app.host, &app.pkts[Q_OTHER]) != DOCA_SUCCESS)
		goto halt;
	if (app.gpu_mode)
		printf("gpp: answering for %s on %s (GPU mode, GPU %s), HTTP port %u, UDP port %u\n",
		       addr, devname, gpp_gpu_pcie(app.gpu), app.host.http_port, app.host.udp_port);
	else
#endif
		printf("gpp: answering for %s on %s (CPU mode), HTTP port %u, UDP port %u\n", addr,
		       devname, app.host.http_port, app.host.udp_port);
	fflush(stdout);
	start = now_s();
	next = start + 1;
	rc = 0;
	while (!g_stop && (limit == 0 || now_s() - start < limit)) {
		struct timespec nap = {0, GPP_IDLE_NS};

		if (!doca_pe_progress(app.pe))
			nanosleep(&nap, NULL);
#ifdef GPP_WITH_GPU
		if (app.gpu_mode) {
			uint32_t err = gpp_gpu_error(app.gpu);

			if (err != 0) {
				DOCA_LOG_ERR("a kernel stopped on an error: %s",
					     doca_error_get_descr((doca_error_t)err));
				rc = 1;
				break;
			}
			continue; /* the statistics thread prints the rates */
		}
#endif
		if (now_s() >= next) {
			printf("gpp: %.0f s", next - start);
			for (int q = 0; q < Q_NUM; q++) {
				printf(" %s %llu/s", q_name[q],
				       (unsigned long long)(app.pkts[q] - last[q]));
				last[q] = app.pkts[q];
			}
			printf("\n");
			fflush(stdout);
			next += 1;
		}
	}
#ifdef GPP_WITH_GPU
halt:
	/* the kernels end before anything they use goes; one that does not end keeps it all */
	if (app.gpu != NULL && gpp_gpu_halt(app.gpu) != DOCA_SUCCESS) {
		print_totals(&app);
		DOCA_LOG_ERR("a kernel did not stop: nothing is torn down");
		return 1;
	}
	if (app.gpu_mode && app.gpu != NULL && gpp_gpu_error(app.gpu) != 0)
		rc = 1;
#endif
out:
	if (app.gpu_mode)
		print_totals(&app); /* from the GPU part, which the rollback frees */
	rollback(&app);
	if (!app.gpu_mode)
		print_totals(&app); /* with the sends the rollback's flush completed */
	return rc;
}
