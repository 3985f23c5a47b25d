/*
 * The GPUNetIO rollback helper (include/softdpu/gpunetio_rollback.h, libdoca_eth) without a
 * GPU: argument checks, a plan without a GPU refusing GPU pieces, and the re-verify logic with a
 * scripted measurement: a pass, a miss then a pass (retried once), two misses (the residual gap,
 * DOCA_ERROR_UNEXPECTED, and a later run that does not measure again), a failing measurement,
 * the tolerance boundary, and a re-verify without a baseline. The GPU half (a kernel that
 * outlives the drain deadline) is tests/gpu/test_rollback_hang.cu.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "softdpu/gpunetio_rollback.h"

#include "t_helpers.h"

struct script {
	double rates[4];
	doca_error_t status[4];
	int n, calls;
};

static doca_error_t scripted(void *user, double *rate)
{
	struct script *s = user;
	int k = s->calls++;

	if (k >= s->n) {
		t_fail("measured %d times, %d scripted", k + 1, s->n);
		return DOCA_ERROR_UNEXPECTED;
	}
	if (s->status[k] != DOCA_SUCCESS)
		return s->status[k];
	*rate = s->rates[k];
	return DOCA_SUCCESS;
}

static struct sdp_gpu_rollback *plan(struct script *s, double tolerance)
{
	struct sdp_gpu_rollback *rb = NULL;

	T_OK(sdp_gpu_rollback_create(NULL, &rb));
	if (rb != NULL)
		T_OK(sdp_gpu_rollback_set_reverify(rb, scripted, s, tolerance));
	return rb;
}

static void check_gpu_steps_skipped(const struct sdp_gpu_rollback_report *r)
{
	for (int k = 0; k < SDP_GPU_ROLLBACK_REVERIFY; k++)
		T_EQ_INT(r->state[k], SDP_GPU_ROLLBACK_SKIPPED);
	T_EQ_INT(r->contexts, 0);
	T_EQ_INT(r->registrations, 0);
	T_EQ_INT(r->gpu_mem, 0);
	T_EQ_INT(r->gpu_destroyed, 0);
	T_EQ_INT(r->kernel_running, 0);
}

static void test_args(void)
{
	struct sdp_gpu_rollback *rb = NULL;
	uint32_t flag = 0;
	int dummy;

	T_STATUS(sdp_gpu_rollback_create(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_gpu_rollback_create(NULL, &rb));
	T_TRUE(rb != NULL);
	/* a plan without a GPU takes no GPU piece */
	T_STATUS(sdp_gpu_rollback_set_kernel(rb, &flag, 1, &dummy, 1000), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_gpu_rollback_add_gpu_mem(rb, &dummy), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_gpu_rollback_add_mmap(rb, (struct doca_mmap *)&dummy),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_gpu_rollback_add_buf_arr(rb, (struct doca_buf_arr *)&dummy),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_gpu_rollback_add_rxq(rb, (struct doca_eth_rxq *)&dummy),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_gpu_rollback_add_txq(rb, (struct doca_eth_txq *)&dummy),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_gpu_rollback_add_mmap(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_gpu_rollback_set_reverify(rb, NULL, NULL, 0.1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_gpu_rollback_set_reverify(rb, scripted, NULL, 1.0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_gpu_rollback_baseline(rb, NULL), DOCA_ERROR_BAD_STATE);
	T_STATUS(sdp_gpu_rollback_set_baseline(rb, -1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_gpu_rollback_run(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	/* nothing in the plan at all: every step skipped, success */
	{
		struct sdp_gpu_rollback_report r;

		T_OK(sdp_gpu_rollback_run(rb, &r));
		check_gpu_steps_skipped(&r);
		T_EQ_INT(r.state[SDP_GPU_ROLLBACK_REVERIFY], SDP_GPU_ROLLBACK_SKIPPED);
		T_EQ_INT(r.failed_step, SDP_GPU_ROLLBACK_NB_STEPS);
	}
	sdp_gpu_rollback_destroy(rb);
	T_EQ_STR(sdp_gpu_rollback_step_name(SDP_GPU_ROLLBACK_DRAIN), "drain");
	T_EQ_STR(sdp_gpu_rollback_step_name(SDP_GPU_ROLLBACK_REVERIFY), "reverify");
	T_EQ_STR(sdp_gpu_rollback_step_name(SDP_GPU_ROLLBACK_NB_STEPS), "unknown");
	T_EQ_STR(sdp_gpu_rollback_state_name(SDP_GPU_ROLLBACK_SKIPPED), "skipped");
}

static void test_reverify(void)
{
	struct sdp_gpu_rollback_report r;
	struct sdp_gpu_rollback *rb;
	double base = 0;

	/* a pass at once: one measurement after the baseline */
	{
		struct script s = {.rates = {1000, 990}, .n = 2};

		rb = plan(&s, 0.2);
		T_OK(sdp_gpu_rollback_baseline(rb, &base));
		T_TRUE(base == 1000);
		T_OK(sdp_gpu_rollback_run(rb, &r));
		check_gpu_steps_skipped(&r);
		T_EQ_INT(r.state[SDP_GPU_ROLLBACK_REVERIFY], SDP_GPU_ROLLBACK_DONE);
		T_EQ_INT(r.reverify_attempts, 1);
		T_TRUE(r.reverify_pps[0] == 990 && r.reverify_pps[1] < 0);
		T_TRUE(r.baseline_pps == 1000 && r.tolerance == 0.2);
		T_EQ_INT(s.calls, 2);
		/* a second run after success measures nothing more */
		T_OK(sdp_gpu_rollback_run(rb, &r));
		T_EQ_INT(s.calls, 2);
		sdp_gpu_rollback_destroy(rb);
	}
	/* a miss, then a pass: retried once, green */
	{
		struct script s = {.rates = {1000, 500, 950}, .n = 3};

		rb = plan(&s, 0.2);
		T_OK(sdp_gpu_rollback_baseline(rb, NULL));
		T_OK(sdp_gpu_rollback_run(rb, &r));
		T_EQ_INT(r.state[SDP_GPU_ROLLBACK_REVERIFY], SDP_GPU_ROLLBACK_DONE);
		T_EQ_INT(r.reverify_attempts, 2);
		T_TRUE(r.reverify_pps[0] == 500 && r.reverify_pps[1] == 950);
		T_TRUE(r.residual_gap == 0);
		sdp_gpu_rollback_destroy(rb);
	}
	/* two misses: the residual gap, UNEXPECTED, and never measured again */
	{
		struct script s = {.rates = {1000, 500, 600}, .n = 3};

		rb = plan(&s, 0.1);
		T_OK(sdp_gpu_rollback_baseline(rb, NULL));
		T_STATUS(sdp_gpu_rollback_run(rb, &r), DOCA_ERROR_UNEXPECTED);
		T_EQ_INT(r.state[SDP_GPU_ROLLBACK_REVERIFY], SDP_GPU_ROLLBACK_FAILED);
		T_EQ_INT(r.result[SDP_GPU_ROLLBACK_REVERIFY], DOCA_ERROR_UNEXPECTED);
		T_EQ_INT(r.failed_step, SDP_GPU_ROLLBACK_REVERIFY);
		T_EQ_INT(r.reverify_attempts, 2);
		T_TRUE(r.reverify_pps[0] == 500 && r.reverify_pps[1] == 600);
		T_TRUE(r.residual_gap > 0.399 && r.residual_gap < 0.401);
		T_STATUS(sdp_gpu_rollback_run(rb, &r), DOCA_ERROR_UNEXPECTED);
		T_EQ_INT(s.calls, 3);
		T_EQ_INT(r.reverify_attempts, 2);
		sdp_gpu_rollback_destroy(rb);
	}
	/* a measurement that fails counts as a miss; the boundary rate passes */
	{
		struct script s = {.rates = {1000, 0, 800},
				   .status = {DOCA_SUCCESS, DOCA_ERROR_IO_FAILED, DOCA_SUCCESS},
				   .n = 3};

		rb = plan(&s, 0.2);
		T_OK(sdp_gpu_rollback_baseline(rb, NULL));
		T_OK(sdp_gpu_rollback_run(rb, &r));
		T_EQ_INT(r.reverify_attempts, 2);
		T_TRUE(r.reverify_pps[0] < 0 && r.reverify_pps[1] == 800);
		sdp_gpu_rollback_destroy(rb);
	}
	/* a baseline measurement that fails is reported and not kept */
	{
		struct script s = {.status = {DOCA_ERROR_IO_FAILED}, .n = 1};

		rb = plan(&s, -1);
		T_STATUS(sdp_gpu_rollback_baseline(rb, NULL), DOCA_ERROR_IO_FAILED);
		T_STATUS(sdp_gpu_rollback_run(rb, &r), DOCA_ERROR_BAD_STATE);
		T_EQ_INT(r.state[SDP_GPU_ROLLBACK_REVERIFY], SDP_GPU_ROLLBACK_FAILED);
		T_TRUE(r.tolerance == SDP_GPU_ROLLBACK_DEFAULT_TOLERANCE);
		T_EQ_INT(s.calls, 1);
		sdp_gpu_rollback_destroy(rb);
	}
	/* a baseline recorded by the caller */
	{
		struct script s = {.rates = {70, 72}, .n = 2};

		rb = plan(&s, 0.25);
		T_OK(sdp_gpu_rollback_set_baseline(rb, 100));
		T_STATUS(sdp_gpu_rollback_run(rb, &r), DOCA_ERROR_UNEXPECTED);
		T_EQ_INT(s.calls, 2);
		T_TRUE(r.residual_gap > 0.279 && r.residual_gap < 0.281);
		sdp_gpu_rollback_destroy(rb);
	}
}

int main(void)
{
	test_args();
	test_reverify();
	T_DONE();
}
