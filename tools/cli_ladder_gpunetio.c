/*
 * softdpu ladder gpunetio: the GPUNetIO seed's test ladder, with evidence (sdp_evidence.h).
 *
 *   1 single-packet  one packet in: the persistent kernel (or, without a GPU, a CPU receive
 *                    queue) sees exactly one completion
 *   2 burst          a burst (default 1000) in, every packet, no overwrite or drop
 *   3 tx             one packet out (a kernel on a GPU send queue, or a CPU send queue) arrives
 *                    intact at the peer of a loop wire
 *   4 each-gpu       rungs 1 and 3 on every GPU in turn (skipped without a GPU)
 *   5 negative       capability discovery answers NOT_SUPPORTED for a device without an
 *                    Ethernet port and for a GPU below compute capability 8.0 (override)
 *
 * Every rung first runs the capability discovery of its device (doca_eth_*q_cap_is_type_
 * supported for the data path in use). The GPU rungs need a CUDA build, /dev/nvidiactl, a
 * driver and a GPU; without them the CPU data path stands in (same rungs through the CPU
 * receive and send tasks) and the reason is recorded. The tool declares its own gen and loop
 * devices (SOFTDPU_DEVICES, appended); --dev NAME runs rungs 1-2 on a listed device instead.
 * docs/ladders.md ("GPUNetIO ladder") describes the rungs, the triggers and the layers.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "doca_dev.h"
#include "doca_eth_rxq.h"
#include "doca_eth_txq.h"
#include "doca_gpunetio.h"
#include "sdp_build_config.h"
#include "sdp_cli.h"
#include "sdp_evidence.h"
#include "softdpu/eth.h"
#include "softdpu/gpunetio.h"
#include "softdpu/gpunetio_rollback.h"

#include "cli_gpunetio.h"

#define NRUNGS 5
#define HOST_DEV "softdpu0"

struct lad {
	const char *dev_opt; /* --dev */
	uint32_t burst, ring_slots;
	int gpu_ok;
	char gpu_why[160];
	char bus0[32];
	int ngpus;
	struct sdp_ev *ev;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: softdpu ladder gpunetio [options]\n"
		"  --dev <name>          run rungs 1-2 on this listed device (default: gen devices\n"
		"                        the tool declares itself)\n"
		"  --burst <n>           packets of rung 2 (1 to 65536, default 1000)\n"
		"  --ring-slots <n>      receive ring slots of rung 2 (a power of two; default the\n"
		"                        next one at or above the burst)\n"
		"  --evidence <file>     write the evidence document there\n"
		"  --compare <prev.json> classify this iteration against a previous one\n"
		"  --json                the evidence document on stdout (one JSON object)\n"
		"  --help\n"
		"Exit status: 0 every rung passed or was skipped, 1 a rung failed, 2 bad usage.\n");
}

static struct json_object *jstr(const char *s)
{
	return json_object_new_string(s != NULL ? s : "");
}

static struct json_object *jint(int64_t v)
{
	return json_object_new_int64(v);
}

static const char *ename(doca_error_t e)
{
	return doca_error_get_name(e);
}

/* Capability discovery of the receive (rx 1) or send path of dev: the DOCA axis. */
static doca_error_t cap_of(struct doca_dev *dev, int rx, int gpu)
{
	const struct doca_devinfo *di = doca_dev_as_devinfo(dev);

	if (rx)
		return doca_eth_rxq_cap_is_type_supported(
			di, gpu ? DOCA_ETH_RXQ_TYPE_CYCLIC : DOCA_ETH_RXQ_TYPE_REGULAR,
			gpu ? DOCA_ETH_RXQ_DATA_PATH_TYPE_GPU : DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU);
	return doca_eth_txq_cap_is_type_supported(di, DOCA_ETH_TXQ_TYPE_REGULAR,
						  gpu ? DOCA_ETH_TXQ_DATA_PATH_TYPE_GPU :
							DOCA_ETH_TXQ_DATA_PATH_TYPE_CPU);
}

/* Open a device and run its capability discovery; 0 with *dev, else the rung failed. */
static int open_capable(struct sdp_ev_rung *r, const char *name, int rx, int gpu,
			struct doca_dev **dev)
{
	doca_error_t s = cg_open(name, dev);

	if (s != DOCA_SUCCESS) {
		sdp_ev_rung_fail(r, "device-not-found", SDP_EV_LAYER_DEVICE, s,
				 "softdpu env (is the device declared and listed?)",
				 "device %s: %s", name, ename(s));
		return -1;
	}
	s = cap_of(*dev, rx, gpu);
	sdp_ev_material(r, rx ? "rx_capability" : "tx_capability", jstr(ename(s)));
	if (s != DOCA_SUCCESS) {
		sdp_ev_rung_fail(r, "device-not-capable", SDP_EV_LAYER_DEVICE, s,
				 "softdpu caps (which devices have an Ethernet port)",
				 "%s: %s queues on the %s data path: %s", name,
				 rx ? (gpu ? "CYCLIC receive" : "REGULAR receive") : "send",
				 gpu ? "GPU" : "CPU", ename(s));
		doca_dev_close(*dev);
		*dev = NULL;
		return -1;
	}
	return 0;
}

static void rxq_counters(struct sdp_ev_rung *r, struct doca_eth_rxq *rxq)
{
	struct sdp_eth_rxq_counters c;
	struct json_object *o;

	if (rxq == NULL || sdp_eth_rxq_get_counters(rxq, &c) != DOCA_SUCCESS)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "packets", jint((int64_t)c.packets));
	json_object_object_add(o, "ring_packets", jint((int64_t)c.ring_packets));
	json_object_object_add(o, "drops", jint((int64_t)c.drops));
	json_object_object_add(o, "overwrites", jint((int64_t)c.overwrites));
	json_object_object_add(o, "ring_full", jint((int64_t)c.ring_full));
	sdp_ev_detail(r, "queue_counters", o);
}

/* The rollback report as one object (for the detail of a GPU rung). */
static struct json_object *rollback_json(const struct sdp_gpu_rollback_report *rep)
{
	struct json_object *o = json_object_new_object();

	for (int k = 0; k < SDP_GPU_ROLLBACK_NB_STEPS; k++)
		json_object_object_add(o, sdp_gpu_rollback_step_name((enum sdp_gpu_rollback_step)k),
				       jstr(sdp_gpu_rollback_state_name(rep->state[k])));
	json_object_object_add(o, "drain_ms", json_object_new_double(rep->drain_ms));
	return o;
}

/*
 * One packet (want 1, exact) or a burst (want n): on the GPU when bus is not NULL, else through
 * a CPU receive queue. exact: the tool's own gen device, which sends exactly want.
 */
static void rx_rung(struct lad *l, struct sdp_ev_rung *r, const char *bus, const char *name,
		    uint64_t want, int exact, int burst)
{
	struct doca_dev *dev = NULL;
	uint64_t got = 0, overwrites = 0, drops = 0;
	const char *layer = SDP_EV_LAYER_PROGRAM;
	char why[256] = "";
	doca_error_t s;

	sdp_ev_material(r, "path", jstr(bus ? "gpu" : "cpu-stand-in"));
	sdp_ev_material(r, "queue",
			jstr(l->dev_opt ? name :
			     burst	? "gen count=burst" :
					  "gen count=1"));
	sdp_ev_detail(r, "device", jstr(name));
	if (open_capable(r, name, 1, bus != NULL, &dev) != 0)
		return;
	if (bus != NULL) {
		struct cg_gpu_rx g;
		struct sdp_gpu_rollback_report rep = {0};
		struct sdp_eth_rxq_counters c = {0};
		uint32_t slots = burst ? (l->ring_slots ? l->ring_slots : 1024) : 256;

		s = cg_gpu_rx_attach(bus, dev, slots, &g, &layer, why, sizeof(why));
		if (s == DOCA_SUCCESS) {
			s = cg_gpu_rx_launch(&g, 5000, why, sizeof(why));
			layer = SDP_EV_LAYER_DRIVER;
		}
		if (s == DOCA_SUCCESS) {
			sdp_ev_material(r, "kernel", jstr("launched"));
			cg_gpu_rx_wait(&g, 10, want);
			cg_gpu_rx_wait(&g, 0.3, 0); /* and nothing more */
			got = __atomic_load_n(&g.st_cpu->packets, __ATOMIC_ACQUIRE);
			if (g.st_cpu->error != 0) {
				s = (doca_error_t)g.st_cpu->error;
				layer = SDP_EV_LAYER_QUEUE;
				snprintf(why, sizeof(why), "the kernel's receive call failed: %s",
					 ename(s));
			}
			(void)sdp_eth_rxq_get_counters(g.rxq, &c);
			overwrites = c.overwrites;
			drops = c.drops;
			rxq_counters(r, g.rxq);
			sdp_ev_detail(r, "kernel_calls", jint((int64_t)g.st_cpu->calls));
		}
		{
			doca_error_t d = cg_gpu_rx_detach(&g, &rep);

			sdp_ev_detail(r, "rollback", rollback_json(&rep));
			sdp_ev_material(
				r, "kernel_state",
				jstr(rep.kernel_running ? "running (drain deadline)" :
				     rep.state[SDP_GPU_ROLLBACK_DRAIN] == SDP_GPU_ROLLBACK_DONE ?
							  "finished" :
							  "not launched"));
			if (s == DOCA_SUCCESS && d != DOCA_SUCCESS) {
				s = d;
				layer = rep.kernel_running ? SDP_EV_LAYER_GPU :
							     SDP_EV_LAYER_PROGRAM;
				snprintf(why, sizeof(why), "rollback step %s: %s",
					 sdp_gpu_rollback_step_name(rep.failed_step), ename(d));
			}
		}
		if (s != DOCA_SUCCESS) {
			sdp_ev_rung_fail(r, "gpu-setup", layer, s,
					 "softdpu caps; nvidia-smi -q; DOCA_LOG_LEVEL=trace", "%s",
					 why);
			doca_dev_close(dev);
			return;
		}
	} else {
		struct cg_rxq q;
		struct sdp_eth_port_counters pc = {0};
		struct sdp_eth_rxq_counters c = {0};
		double end;

		/* the burst lands in the ring first (CYCLIC: a ring too small loses frames) */
		s = cg_rxq_start(dev, burst ? (l->ring_slots ? l->ring_slots : 1024) : 0, burst,
				 burst ? 256 : 32, !burst, &q);
		if (s != DOCA_SUCCESS) {
			sdp_ev_rung_fail(r, "queue-start", SDP_EV_LAYER_QUEUE, s,
					 "docs/eth.md (ring size, overflow mode)",
					 "CPU receive queue on %s: %s", name, ename(s));
			doca_dev_close(dev);
			return;
		}
		if (burst) {
			end = cg_now_s() + 10;
			while (cg_now_s() < end &&
			       sdp_eth_dev_get_port_counters(dev, &pc) == DOCA_SUCCESS &&
			       pc.rx_packets < want)
				cg_rxq_progress(&q, 0.001, 0);
			(void)cg_rxq_post(&q);
		}
		cg_rxq_progress(&q, 10, want);
		cg_rxq_progress(&q, 0.3, 0);
		got = q.received;
		(void)sdp_eth_rxq_get_counters(q.rxq, &c);
		overwrites = c.overwrites;
		drops = c.drops;
		rxq_counters(r, q.rxq);
		sdp_ev_detail(r, "ring_slots",
			      jint(burst ? (l->ring_slots ? l->ring_slots : 1024) : 0));
		if (q.errors != 0) {
			sdp_ev_rung_fail(r, "receive-error", SDP_EV_LAYER_QUEUE, q.last_error,
					 "DOCA_LOG_LEVEL=trace", "%llu receive tasks failed (%s)",
					 (unsigned long long)q.errors, ename(q.last_error));
			cg_rxq_stop(&q);
			doca_dev_close(dev);
			return;
		}
		cg_rxq_stop(&q);
	}
	doca_dev_close(dev);
	sdp_ev_material(r, "packets", jint((int64_t)got));
	sdp_ev_material(r, "overwrites", jint((int64_t)overwrites));
	sdp_ev_material(r, "drops", jint((int64_t)drops));
	if (overwrites != 0 || drops != 0) {
		sdp_ev_rung_fail(
			r, "ring-too-small", SDP_EV_LAYER_QUEUE, DOCA_ERROR_AGAIN,
			"a larger ring (--ring-slots) or a faster drain",
			"%llu of %llu packets; %llu overwritten, %llu dropped: the receive "
			"ring is too small for the burst",
			(unsigned long long)got, (unsigned long long)want,
			(unsigned long long)overwrites, (unsigned long long)drops);
		return;
	}
	if (got < want || (exact && got != want)) {
		sdp_ev_rung_fail(r, got == 0 ? "no-completion" : "wrong-count",
				 bus ? SDP_EV_LAYER_PROGRAM : SDP_EV_LAYER_QUEUE, DOCA_SUCCESS,
				 "is the queue the one the traffic reaches? (softdpu env)",
				 "%llu packets seen, %s%llu expected", (unsigned long long)got,
				 exact ? "" : "at least ", (unsigned long long)want);
		return;
	}
	sdp_ev_rung_pass(r);
}

/* One packet out on the loop pair: GPU send queue (bus) or CPU send queue. */
static void tx_rung(struct sdp_ev_rung *r, const char *bus)
{
	struct doca_dev *a = NULL, *b = NULL;
	uint64_t received = 0;
	int intact = 0;
	int32_t cq = 0;
	const char *layer = SDP_EV_LAYER_PROGRAM;
	char why[256] = "";
	doca_error_t s;

	sdp_ev_material(r, "path", jstr(bus ? "gpu" : "cpu-stand-in"));
	sdp_ev_material(r, "queue", jstr("loop pair"));
	if (open_capable(r, cg_dev_name("a"), 0, bus != NULL, &a) != 0)
		return;
	s = cg_open(cg_dev_name("b"), &b);
	if (s != DOCA_SUCCESS) {
		sdp_ev_rung_fail(r, "device-not-found", SDP_EV_LAYER_DEVICE, s, "softdpu env",
				 "the loop peer: %s", ename(s));
		doca_dev_close(a);
		return;
	}
	if (bus != NULL) {
		s = cg_gpu_tx_one(bus, a, b, CG_FRAME_LEN, &received, &intact, &cq, &layer, why,
				  sizeof(why));
		sdp_ev_material(r, "completion", jstr(ename((doca_error_t)cq)));
	} else {
		struct cg_rxq q;
		uint8_t frame[CG_FRAME_LEN];

		cg_build_frame(frame, sizeof(frame), 3);
		s = cg_rxq_start(b, 0, 0, 16, 1, &q);
		if (s == DOCA_SUCCESS) {
			s = cg_cpu_send_one(a, frame, sizeof(frame));
			layer = SDP_EV_LAYER_QUEUE;
			snprintf(why, sizeof(why), "CPU send task: %s", ename(s));
			cg_rxq_progress(&q, 5, 1);
			cg_rxq_progress(&q, 0.2, 0);
			received = q.received;
			intact = q.received >= 1 && q.first_len == sizeof(frame) &&
				 memcmp(q.first, frame, sizeof(frame)) == 0;
			cg_rxq_stop(&q);
		} else {
			layer = SDP_EV_LAYER_QUEUE;
			snprintf(why, sizeof(why), "CPU receive queue on the peer: %s", ename(s));
		}
	}
	doca_dev_close(a);
	doca_dev_close(b);
	sdp_ev_material(r, "received", jint((int64_t)received));
	sdp_ev_material(r, "intact", json_object_new_boolean(intact));
	if (s != DOCA_SUCCESS) {
		sdp_ev_rung_fail(r, "tx-setup", layer, s, "DOCA_LOG_LEVEL=trace", "%s", why);
		return;
	}
	if (received != 1 || !intact) {
		sdp_ev_rung_fail(r, received == 0 ? "tx-not-received" : "tx-damaged",
				 bus ? SDP_EV_LAYER_PROGRAM : SDP_EV_LAYER_QUEUE, DOCA_SUCCESS,
				 "the send queue's counters (sdp_eth_txq_get_counters)",
				 "the peer received %llu frame(s)%s; exactly 1 intact expected",
				 (unsigned long long)received, intact ? "" : ", not intact");
		return;
	}
	sdp_ev_rung_pass(r);
}

static struct json_object *gpu_list(int *n_p)
{
	struct json_object *a = json_object_new_array();
	const char *reason = NULL;
	int n = 0;

	if (sdp_gpu_cap_count(&n, &reason) != DOCA_SUCCESS) {
		*n_p = 0;
		json_object_put(a);
		return jstr(reason ? reason : "not available");
	}
	for (int i = 0; i < n; i++) {
		struct sdp_gpu_cap c;
		struct json_object *o = json_object_new_object();

		if (sdp_gpu_cap_query(i, &c) != DOCA_SUCCESS) {
			json_object_put(o);
			continue;
		}
		json_object_object_add(o, "bus_id", jstr(c.bus_id));
		json_object_object_add(o, "name", jstr(c.name));
		{
			char cc[16];

			snprintf(cc, sizeof(cc), "%d.%d", c.cc_major, c.cc_minor);
			json_object_object_add(o, "cc", jstr(cc));
		}
		json_object_object_add(o, "supported", json_object_new_boolean(c.supported));
		if (!c.supported)
			json_object_object_add(o, "reason", jstr(c.reason));
		json_object_array_add(a, o);
	}
	*n_p = n;
	return a;
}

static void each_gpu_rung(struct lad *l, struct sdp_ev_rung *r)
{
	struct json_object *per = json_object_new_array();
	int failed = 0, ran = 0;

	if (!l->gpu_ok) {
		json_object_put(per);
		sdp_ev_rung_skip(r, l->gpu_why);
		return;
	}
	for (int i = 0; i < l->ngpus && !failed; i++) {
		struct sdp_gpu_cap c;
		struct json_object *o = json_object_new_object();
		struct sdp_ev *sub = sdp_ev_new("gpunetio", 2);
		struct sdp_ev_rung *sr;
		char bus[32];
		doca_error_t s;

		json_object_object_add(o, "ordinal", jint(i));
		if (sdp_gpu_cap_query(i, &c) != DOCA_SUCCESS || !c.supported) {
			json_object_object_add(o, "result", jstr("not supported"));
			json_object_array_add(per, o);
			sdp_ev_free(sub);
			continue;
		}
		s = cg_gpu_select(i, bus, sizeof(bus));
		if (s != DOCA_SUCCESS) {
			sdp_ev_detail(r, "gpus", per);
			sdp_ev_rung_fail(r, "gpu-select", SDP_EV_LAYER_DRIVER, s, "nvidia-smi -q",
					 "GPU %d: %s", i, bus);
			json_object_put(o);
			sdp_ev_free(sub);
			return;
		}
		sdp_ev_progress(r, "GPU %d (%s)", i, bus);
		/* rungs 1 and 3 on this GPU, recorded in a private evidence document */
		sdp_ev_set_quiet(sub, 1);
		sr = sdp_ev_rung_begin(sub, 1, "single-packet");
		if (sr != NULL)
			rx_rung(l, sr, bus, l->dev_opt ? l->dev_opt : cg_dev_name("one"), 1,
				l->dev_opt == NULL, 0);
		if (!sdp_ev_failed(sub)) {
			sr = sdp_ev_rung_begin(sub, 2, "tx");
			if (sr != NULL)
				tx_rung(sr, bus);
		}
		{
			struct json_object *doc = sdp_ev_json(sub), *rungs = NULL, *trig = NULL;

			json_object_object_add(o, "bus_id", jstr(bus));
			if (json_object_object_get_ex(doc, "rungs", &rungs))
				json_object_object_add(o, "rungs", json_object_get(rungs));
			if (json_object_object_get_ex(doc, "trigger", &trig) && trig != NULL) {
				struct json_object *ly = NULL, *tg = NULL;

				json_object_object_get_ex(trig, "layer", &ly);
				json_object_object_get_ex(trig, "trigger", &tg);
				failed = 1;
				json_object_array_add(per, o);
				sdp_ev_detail(r, "gpus", per);
				sdp_ev_rung_fail(r, tg ? json_object_get_string(tg) : "gpu-rung",
						 ly ? json_object_get_string(ly) : SDP_EV_LAYER_GPU,
						 DOCA_SUCCESS,
						 "re-run the ladder on this GPU alone",
						 "GPU %d (%s): %s", i, bus,
						 json_object_to_json_string(trig));
				sdp_ev_free(sub);
				break;
			}
			json_object_object_add(o, "result", jstr("pass"));
		}
		json_object_array_add(per, o);
		sdp_ev_free(sub);
		ran++;
	}
	if (failed)
		return;
	sdp_ev_material(r, "gpus_run", jint(ran));
	sdp_ev_detail(r, "gpus", per);
	if (ran == 0) {
		sdp_ev_rung_fail(r, "no-capable-gpu", SDP_EV_LAYER_GPU, DOCA_ERROR_NOT_SUPPORTED,
				 "softdpu caps (compute capability 8.0 or later needed)",
				 "no GPU passed the capability query");
		return;
	}
	sdp_ev_rung_pass(r);
}

static void negative_rung(struct lad *l, struct sdp_ev_rung *r)
{
	struct doca_dev *host = NULL;
	doca_error_t rx, tx, s;

	/* the DOCA axis: a device without an Ethernet port */
	s = cg_open(HOST_DEV, &host);
	if (s != DOCA_SUCCESS) {
		sdp_ev_rung_fail(r, "device-not-found", SDP_EV_LAYER_DEVICE, s, "softdpu env",
				 "the host device %s: %s", HOST_DEV, ename(s));
		return;
	}
	rx = cap_of(host, 1, 1);
	tx = cap_of(host, 0, 1);
	doca_dev_close(host);
	sdp_ev_material(r, "device_axis_rx", jstr(ename(rx)));
	sdp_ev_material(r, "device_axis_tx", jstr(ename(tx)));
	if (rx != DOCA_ERROR_NOT_SUPPORTED || tx != DOCA_ERROR_NOT_SUPPORTED) {
		sdp_ev_rung_fail(r, "capability-discovery-wrong", SDP_EV_LAYER_DEVICE,
				 rx != DOCA_ERROR_NOT_SUPPORTED ? rx : tx,
				 "doca_eth_rxq_cap_is_type_supported on the host device",
				 "%s (no Ethernet port): rx %s, tx %s; NOT_SUPPORTED expected",
				 HOST_DEV, ename(rx), ename(tx));
		return;
	}
	/* the CUDA axis: a GPU below 8.0 (compute capability override) */
	if (l->ngpus > 0) {
		struct sdp_gpu_cap c = {0};
		struct doca_gpu *gpu = NULL;

		(void)sdp_gpu_set_cc_override(7, 5);
		(void)sdp_gpu_cap_query(0, &c);
		s = doca_gpu_create(l->bus0, &gpu);
		(void)sdp_gpu_set_cc_override(-1, 0);
		if (s == DOCA_SUCCESS)
			(void)doca_gpu_destroy(gpu);
		sdp_ev_material(r, "gpu_axis_query", jstr(c.supported ? "supported" : c.reason));
		sdp_ev_material(r, "gpu_axis_create", jstr(ename(s)));
		if (s != DOCA_ERROR_NOT_SUPPORTED || c.supported) {
			sdp_ev_rung_fail(r, "capability-discovery-wrong", SDP_EV_LAYER_GPU, s,
					 "sdp_gpu_cap_query / doca_gpu_create with "
					 "SOFTDPU_GPU_CC_OVERRIDE=7.5",
					 "a 7.5 GPU: query says %s, doca_gpu_create %s; "
					 "NOT_SUPPORTED expected",
					 c.supported ? "supported" : "not supported", ename(s));
			return;
		}
	} else {
		int n = 0;
		const char *reason = NULL;

		s = sdp_gpu_cap_count(&n, &reason);
		sdp_ev_material(r, "gpu_axis_query", jstr(ename(s)));
		sdp_ev_detail(r, "gpu_axis_reason", jstr(reason));
		if (s != DOCA_ERROR_NOT_SUPPORTED && n > 0) {
			sdp_ev_rung_fail(r, "capability-discovery-wrong", SDP_EV_LAYER_GPU, s,
					 "softdpu caps", "the GPU query lists %d GPU(s) but %s", n,
					 l->gpu_why);
			return;
		}
	}
	sdp_ev_rung_pass(r);
}

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1u << 24))
		p <<= 1;
	return p;
}

int sdp_cli_ladder_gpunetio(int argc, char **argv, FILE *json_out)
{
	static const struct option opts[] = {{"dev", required_argument, NULL, 'd'},
					     {"burst", required_argument, NULL, 'b'},
					     {"ring-slots", required_argument, NULL, 'r'},
					     {"evidence", required_argument, NULL, 'e'},
					     {"compare", required_argument, NULL, 'c'},
					     {"json", no_argument, NULL, 'j'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct lad l = {.burst = 1000};
	const char *evidence = NULL, *compare = NULL;
	struct json_object *prev = NULL, *doc, *gpus;
	struct sdp_ev_rung *r;
	int json = 0, c, rc, drv = 0, rt = 0;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			l.dev_opt = optarg;
			break;
		case 'b':
			l.burst = (uint32_t)strtoul(optarg, &end, 10);
			if (*end != '\0' || l.burst < 1 || l.burst > 65536) {
				fprintf(stderr, "softdpu: --burst: 1 to 65536\n");
				return SDP_CLI_EXIT_USAGE;
			}
			break;
		case 'r':
			l.ring_slots = (uint32_t)strtoul(optarg, &end, 10);
			if (*end != '\0' || l.ring_slots == 0 || l.ring_slots > (1u << 24) ||
			    (l.ring_slots & (l.ring_slots - 1)) != 0) {
				fprintf(stderr, "softdpu: --ring-slots: a power of two\n");
				return SDP_CLI_EXIT_USAGE;
			}
			break;
		case 'e':
			evidence = optarg;
			break;
		case 'c':
			compare = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return SDP_CLI_EXIT_OK;
		default:
			usage(stderr);
			return SDP_CLI_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "softdpu: ladder gpunetio: unexpected argument %s\n", argv[optind]);
		usage(stderr);
		return SDP_CLI_EXIT_USAGE;
	}
	if (l.ring_slots == 0)
		l.ring_slots = pow2_at_least(l.burst);
	if (compare != NULL) {
		prev = sdp_ev_read(compare);
		if (prev == NULL)
			return SDP_CLI_EXIT_FAIL;
	}
	cg_declare_devices(l.burst, 20000);
	l.gpu_ok = cg_gpu_available(l.gpu_why, sizeof(l.gpu_why));
	l.ev = sdp_ev_new("gpunetio", NRUNGS);
	if (l.ev == NULL) {
		json_object_put(prev);
		return SDP_CLI_EXIT_FAIL;
	}
	sdp_ev_plan(l.ev, 1, "single-packet");
	sdp_ev_plan(l.ev, 2, "burst");
	sdp_ev_plan(l.ev, 3, "tx");
	sdp_ev_plan(l.ev, 4, "each-gpu");
	sdp_ev_plan(l.ev, 5, "negative");

	/* the snapshot: versions, the GPU axis, what stands in */
	cg_cuda_versions(&drv, &rt);
	sdp_ev_snapshot(l.ev, "softdpu", jstr(SOFTDPU_VERSION), 0);
	sdp_ev_snapshot(l.ev, "doca_api", jstr(SDP_DOCA_API_VERSION), 0);
	sdp_ev_snapshot(l.ev, "cuda_built", json_object_new_boolean(cg_cuda_built()), 0);
	sdp_ev_snapshot(l.ev, "cuda_driver", jint(drv), 0);
	sdp_ev_snapshot(l.ev, "cuda_runtime", jint(rt), 0);
	gpus = gpu_list(&l.ngpus);
	sdp_ev_snapshot(l.ev, "gpus", gpus, 0);
	if (l.ngpus > 0) {
		struct sdp_gpu_cap c0;

		if (sdp_gpu_cap_query(0, &c0) == DOCA_SUCCESS)
			snprintf(l.bus0, sizeof(l.bus0), "%s", c0.bus_id);
	}
	if (l.gpu_ok && l.bus0[0] == '\0') {
		l.gpu_ok = 0;
		snprintf(l.gpu_why, sizeof(l.gpu_why), "no GPU the capability query lists");
	}
	if (l.gpu_ok && cg_gpu_select(0, l.bus0, sizeof(l.bus0)) != DOCA_SUCCESS) {
		l.gpu_ok = 0;
		snprintf(l.gpu_why, sizeof(l.gpu_why), "cannot select CUDA device 0");
	}
	sdp_ev_snapshot(l.ev, "data_path", jstr(l.gpu_ok ? "gpu" : "cpu-stand-in"), 0);
	if (!l.gpu_ok)
		sdp_ev_snapshot(l.ev, "gpu_skip_reason", jstr(l.gpu_why), 0);
	sdp_ev_snapshot(l.ev, "device", jstr(l.dev_opt ? l.dev_opt : "tool-declared gen"), 0);
	sdp_ev_snapshot(l.ev, "burst", jint(l.burst), 0);
	sdp_ev_snapshot(l.ev, "ring_slots", jint(l.ring_slots), 0);
	if (!l.gpu_ok)
		fprintf(stderr, "GPU rungs: %s; the CPU data path stands in\n", l.gpu_why);

	r = sdp_ev_rung_begin(l.ev, 1, "single-packet");
	if (r != NULL)
		rx_rung(&l, r, l.gpu_ok ? l.bus0 : NULL, l.dev_opt ? l.dev_opt : cg_dev_name("one"),
			1, l.dev_opt == NULL, 0);
	if (!sdp_ev_failed(l.ev) && (r = sdp_ev_rung_begin(l.ev, 2, "burst")) != NULL)
		rx_rung(&l, r, l.gpu_ok ? l.bus0 : NULL,
			l.dev_opt ? l.dev_opt : cg_dev_name("burst"), l.burst, l.dev_opt == NULL,
			1);
	if (!sdp_ev_failed(l.ev) && (r = sdp_ev_rung_begin(l.ev, 3, "tx")) != NULL)
		tx_rung(r, l.gpu_ok ? l.bus0 : NULL);
	if (!sdp_ev_failed(l.ev) && (r = sdp_ev_rung_begin(l.ev, 4, "each-gpu")) != NULL)
		each_gpu_rung(&l, r);
	if (!sdp_ev_failed(l.ev) && (r = sdp_ev_rung_begin(l.ev, 5, "negative")) != NULL)
		negative_rung(&l, r);

	doc = sdp_ev_json(l.ev);
	if (prev != NULL) {
		enum sdp_ev_outcome o = SDP_EV_SHAPE_CHANGED;
		char why[256] = "";
		struct json_object *cmp = json_object_new_object();
		const char *action;

		if (sdp_ev_compare(prev, doc, &o, why, sizeof(why)) != 0) {
			fprintf(stderr, "softdpu: --compare %s: %s\n", compare, why);
			json_object_put(cmp);
			json_object_put(prev);
			sdp_ev_free(l.ev);
			return SDP_CLI_EXIT_FAIL;
		}
		action = o == SDP_EV_RESOLVED	   ? "resolved: the previous trigger passes now" :
			 o == SDP_EV_SHAPE_CHANGED ? "shape changed: iterate on the new evidence" :
			 !sdp_ev_failed(l.ev)	   ? "unchanged and green: nothing to fix" :
						     "unchanged: the cause is below GPUNetIO "
						     "(CUDA driver, queue, device); escalate with "
						     "this evidence";
		json_object_object_add(cmp, "previous", jstr(compare));
		json_object_object_add(cmp, "outcome", jstr(sdp_ev_outcome_name(o)));
		json_object_object_add(cmp, "why", jstr(why));
		json_object_object_add(
			cmp, "escalate",
			json_object_new_boolean(o == SDP_EV_UNCHANGED && sdp_ev_failed(l.ev)));
		sdp_ev_annotate(l.ev, "compare", cmp);
		fprintf(stderr, "compare with %s: %s (%s); %s\n", compare, sdp_ev_outcome_name(o),
			why, action);
		json_object_put(prev);
		doc = sdp_ev_json(l.ev);
	}
	if (evidence != NULL && sdp_ev_write(l.ev, evidence) != 0) {
		sdp_ev_free(l.ev);
		return SDP_CLI_EXIT_FAIL;
	}
	rc = sdp_ev_failed(l.ev) ? SDP_CLI_EXIT_FAIL : SDP_CLI_EXIT_OK;
	doc = sdp_ev_json(l.ev); /* (sdp_ev_write rebuilt it: the earlier one is gone) */
	if (json) {
		fprintf(json_out, "%s\n",
			json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN));
		fflush(json_out);
	} else {
		struct json_object *res = NULL;

		json_object_object_get_ex(doc, "result", &res);
		printf("ladder gpunetio (%s): %s\n", l.gpu_ok ? "GPU" : "CPU stand-in",
		       res ? json_object_get_string(res) : "?");
	}
	sdp_ev_free(l.ev);
	return rc;
}
