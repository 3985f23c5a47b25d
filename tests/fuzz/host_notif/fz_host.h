/*
 * fuzz_host_notif: what the wrappers (one translation unit per plugin host half, each
 * including that half's source) share with the target (../fuzz_host_notif.c).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef FZ_HOST_H_
#define FZ_HOST_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"
#include "doca_types.h"

struct doca_urom_worker_cmd_task;

/* A finished command task as the host half's completion callback sees it (fakes here). */
struct doca_urom_worker_cmd_task *fz_task_make(const uint8_t *resp, size_t len, int has_resp,
					       doca_error_t status);
void *fz_task_user_data(struct doca_urom_worker_cmd_task *task);
void fz_task_done(struct doca_urom_worker_cmd_task *task); /* checks: released once */

/* Every application callback reports here: checks the result and reads what it is given. */
void fz_cb(doca_error_t result, const void *p1, size_t n1, const void *p2, size_t n2);

/* One completion of each host half; sel picks the command type. */
void fz_graph(struct doca_urom_worker_cmd_task *task, unsigned sel);
void fz_sandbox(struct doca_urom_worker_cmd_task *task, unsigned sel);
void fz_rdmo(struct doca_urom_worker_cmd_task *task, unsigned sel);
void fz_rma(struct doca_urom_worker_cmd_task *task, unsigned sel);
void fz_coll(struct doca_urom_worker_cmd_task *task, unsigned sel);

#endif /* FZ_HOST_H_ */
