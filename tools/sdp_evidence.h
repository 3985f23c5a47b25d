/*
 * Ladder evidence: what `softdpu ladder urom|gpunetio` records rung by rung, written as one JSON
 * document (schema in docs/schemas/ladder-evidence.md), and the seeds' eval-loop comparison of
 * a re-run against the previous iteration (`--compare PREVIOUS.json`).
 *
 * A ladder makes one struct sdp_ev, adds the snapshot (versions, plugin list, capabilities),
 * then climbs: sdp_ev_rung_begin() prints "[k/N] name ..." on stderr (progress) and opens the
 * rung; the rung records what it saw in two parts:
 *   - material: facts that identify the outcome (versions, plugins, error names, completion
 *     counts, the check result, the failing trigger row); two iterations whose material facts
 *     and trigger are equal are "the same";
 *   - detail: what helps a person but changes from run to run (times, rates, pids, addresses,
 *     counters, the log tail).
 * A rung ends once: pass, fail (trigger row, layer, error, next check), or skip (reason). A
 * failing rung stops the climb: the later rungs are recorded as "not-run".
 *
 * Comparison (the seeds' eval-loop overlay): the iteration's trigger is the first failing rung's
 * (rung, trigger) pair, or none when all passed.
 *   resolved       the previous iteration's failing rung passes now;
 *   shape-changed  a different trigger (another rung, or the same rung's other row), or the
 *                  same trigger with materially different evidence (any material fact of the
 *                  snapshot or of a rung up to the failing one differs);
 *   unchanged      the same trigger with the same outcome and the same material evidence: the
 *                  cause is below the library; escalate with the evidence.
 * A previous iteration with no failure compared with a green re-run is "resolved" only when the
 * previous one had failed; two green runs compare as "unchanged" with trigger none (nothing
 * to fix), which the caller reports as green, not as an escalation.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_EVIDENCE_H_
#define SDP_EVIDENCE_H_

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "doca_error.h"

#define SDP_EV_SCHEMA "softdpu-ladder-evidence/1"

/* The layers a failing rung may point to (JSON "layer"). */
#define SDP_EV_LAYER_SERVICE "service"
#define SDP_EV_LAYER_VERSION "version"
#define SDP_EV_LAYER_TRANSPORT "transport"
#define SDP_EV_LAYER_MEMORY "memory-descriptor"
#define SDP_EV_LAYER_PLUGIN "plugin"
#define SDP_EV_LAYER_PROGRAM "program"
#define SDP_EV_LAYER_GPU "gpu"
#define SDP_EV_LAYER_QUEUE "queue"
#define SDP_EV_LAYER_DEVICE "device"
#define SDP_EV_LAYER_DRIVER "driver"

struct sdp_ev;
struct sdp_ev_rung;

/*
 * ladder: "urom" or "gpunetio"; nrungs: how many rungs the climb has (for "[k/N]"), at most 32.
 * The document lists rungs 1 .. nrungs always, rung 0 (a precheck) when planned or begun.
 * NULL for bad arguments or out of memory.
 */
struct sdp_ev *sdp_ev_new(const char *ladder, int nrungs);
void sdp_ev_free(struct sdp_ev *ev);
/* Quiet: no progress lines on stderr (for --json runs that want a silent stderr too). */
void sdp_ev_set_quiet(struct sdp_ev *ev, int quiet);

/* Snapshot facts (material unless detail is set). val is owned by ev afterwards. */
void sdp_ev_snapshot(struct sdp_ev *ev, const char *key, struct json_object *val, int detail);

/*
 * Name rung n before the climb (optional): a rung never begun is then listed as "not-run" under
 * that name (else with an empty name). n as for sdp_ev_rung_begin.
 */
void sdp_ev_plan(struct sdp_ev *ev, int n, const char *name);

/*
 * Open rung number n called name: 1 .. nrungs, or 0 for a precheck before the first rung
 * ("[0/N]"). Each n is begun at most once. NULL only when out of memory or n is out of range.
 */
struct sdp_ev_rung *sdp_ev_rung_begin(struct sdp_ev *ev, int n, const char *name);
/* Record a fact of the rung; val is owned afterwards. */
void sdp_ev_material(struct sdp_ev_rung *r, const char *key, struct json_object *val);
void sdp_ev_detail(struct sdp_ev_rung *r, const char *key, struct json_object *val);
/* Progress inside a long rung ("  ... 40/100 puts"), on stderr unless quiet. */
void sdp_ev_progress(struct sdp_ev_rung *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * The last lines (at most max_lines) of a log file into the rung's detail "log_tail", an
 * object keyed by the file's path (one entry per file; an unreadable file gets its error).
 */
void sdp_ev_log_tail(struct sdp_ev_rung *r, const char *path, int max_lines);

void sdp_ev_rung_pass(struct sdp_ev_rung *r);
/*
 * trigger: the trigger row (a short stable id, e.g. "service-not-running"); layer: one of
 * SDP_EV_LAYER_*; err: the DOCA error the rung got (DOCA_SUCCESS when it was a check that
 * failed); next_check: the next check to run, for a person; fmt: what was seen.
 */
void sdp_ev_rung_fail(struct sdp_ev_rung *r, const char *trigger, const char *layer,
		      doca_error_t err, const char *next_check, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void sdp_ev_rung_skip(struct sdp_ev_rung *r, const char *reason);

/*
 * A top-level key of the document that is not evidence (never compared), e.g. the "compare"
 * result of this iteration against the previous one; val is owned by ev afterwards. Keys the
 * document itself uses ("schema", "rungs", ...) are refused (val released).
 */
void sdp_ev_annotate(struct sdp_ev *ev, const char *key, struct json_object *val);

/* 1 once a rung failed (the climb must stop). */
int sdp_ev_failed(const struct sdp_ev *ev);
/* The whole document (still owned by ev); rungs never begun are listed as "not-run". */
struct json_object *sdp_ev_json(struct sdp_ev *ev);
/* Write the document to path (created 0644, or replaced only when it is a ladder evidence
 * file: SDP_EV_SCHEMA inside); 0, or -1 with the cause on stderr. */
int sdp_ev_write(struct sdp_ev *ev, const char *path);

enum sdp_ev_outcome {
	SDP_EV_RESOLVED,
	SDP_EV_SHAPE_CHANGED,
	SDP_EV_UNCHANGED,
};

/* "resolved", "shape-changed", "unchanged". */
const char *sdp_ev_outcome_name(enum sdp_ev_outcome o);
/*
 * Classify cur against prev (both evidence documents of the same ladder). 0 with *out and a
 * one-line reason in why; -1 when either is not an evidence document of SDP_EV_SCHEMA or the
 * ladders differ (why says which).
 */
int sdp_ev_compare(struct json_object *prev, struct json_object *cur, enum sdp_ev_outcome *out,
		   char *why, size_t why_len);
/* Read an evidence file: the document, or NULL with the cause on stderr. */
struct json_object *sdp_ev_read(const char *path);

#endif /* SDP_EVIDENCE_H_ */
