/*
 * A small DOCA program built the way an application builds against DOCA: public headers only,
 * `pkg-config --cflags --libs doca-common doca-argp doca-urom doca-eth doca-flow doca-gpunetio`,
 * nothing of softdpu's build tree. scripts/run-tests builds it against the uninstalled .pc files
 * and against an installed prefix and runs it with `-d <ibdev>`: it parses its arguments with
 * doca_argp, opens that device, registers memory with an mmap, carves a doca_buf out of it,
 * drives a PE, and makes one call into each of the other libraries (UROM, Ethernet, Flow,
 * GPUNetIO: none needs a service, a NIC or a GPU), so every module's link is a real one.
 * Prints one "consumer: ..." line per step and exits 0 when everything did what DOCA documents.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_argp.h>
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_eth_rxq.h>
#include <doca_flow.h>
#include <doca_gpunetio.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_urom.h>
#include <doca_version.h>

DOCA_LOG_REGISTER(COMPAT_CONSUMER);

#define CONSUMER_MEM_SIZE 4096

struct consumer_cfg {
	char device[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	int repeat;
};

static doca_error_t device_cb(void *param, void *config)
{
	struct consumer_cfg *cfg = config;
	const char *name = param;

	if (strlen(name) >= sizeof(cfg->device)) {
		DOCA_LOG_ERR("device name '%s' is too long", name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(cfg->device, name);
	return DOCA_SUCCESS;
}

static doca_error_t repeat_cb(void *param, void *config)
{
	struct consumer_cfg *cfg = config;

	cfg->repeat = *(int *)param;
	return DOCA_SUCCESS;
}

static doca_error_t register_params(void)
{
	struct doca_argp_param *param;
	doca_error_t ret;

	ret = doca_argp_param_create(&param);
	if (ret != DOCA_SUCCESS)
		return ret;
	doca_argp_param_set_short_name(param, "d");
	doca_argp_param_set_long_name(param, "device");
	doca_argp_param_set_arguments(param, "<ibdev>");
	doca_argp_param_set_description(param, "device to open (ibdev name)");
	doca_argp_param_set_callback(param, device_cb);
	doca_argp_param_set_type(param, DOCA_ARGP_TYPE_STRING);
	ret = doca_argp_register_param(param);
	if (ret != DOCA_SUCCESS)
		return ret;

	ret = doca_argp_param_create(&param);
	if (ret != DOCA_SUCCESS)
		return ret;
	doca_argp_param_set_short_name(param, "r");
	doca_argp_param_set_long_name(param, "repeat");
	doca_argp_param_set_description(param, "how many buffers to take and release");
	doca_argp_param_set_callback(param, repeat_cb);
	doca_argp_param_set_type(param, DOCA_ARGP_TYPE_INT);
	return doca_argp_register_param(param);
}

/* Find the device whose ibdev name is `name` and open it. */
static doca_error_t open_device(const char *name, struct doca_dev **dev)
{
	char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	struct doca_devinfo **list;
	uint32_t n, i;
	doca_error_t ret;

	ret = doca_devinfo_create_list(&list, &n);
	if (ret != DOCA_SUCCESS) {
		DOCA_LOG_ERR("doca_devinfo_create_list: %s", doca_error_get_descr(ret));
		return ret;
	}
	ret = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < n; i++) {
		if (doca_devinfo_get_ibdev_name(list[i], ibdev, sizeof(ibdev)) != DOCA_SUCCESS)
			continue;
		if (strcmp(ibdev, name) == 0) {
			ret = doca_dev_open(list[i], dev);
			break;
		}
	}
	doca_devinfo_destroy_list(list);
	if (ret != DOCA_SUCCESS)
		DOCA_LOG_ERR("device %s (among %u): %s", name, n, doca_error_get_descr(ret));
	return ret;
}

static int check(const char *what, doca_error_t got, doca_error_t want)
{
	if (got == want)
		return 0;
	fprintf(stderr, "consumer: %s: expected %s, got %s\n", what, doca_error_get_name(want),
		doca_error_get_name(got));
	return 1;
}

/* One call into each of libdoca_urom, libdoca_eth, libdoca_flow and libdoca_gpunetio. */
static int check_modules(void)
{
	struct doca_urom_service *svc = NULL;
	struct doca_flow_cfg *flow_cfg = NULL;
	struct doca_gpu *gpu = NULL;
	uint32_t est = 0;
	int fails = 0;

	fails += check("doca_urom_service_create", doca_urom_service_create(&svc), DOCA_SUCCESS);
	if (svc != NULL)
		fails += check("doca_urom_service_destroy", doca_urom_service_destroy(svc),
			       DOCA_SUCCESS);

	fails += check("doca_eth_rxq_estimate_packet_buf_size",
		       doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL, 0,
							     0, 2048, 256, 0, 0, 0, &est),
		       DOCA_SUCCESS);
	if (est < 2048) {
		fprintf(stderr, "consumer: packet buffer estimate %u is below one packet\n", est);
		fails++;
	}

	fails += check("doca_flow_cfg_create", doca_flow_cfg_create(&flow_cfg), DOCA_SUCCESS);
	if (flow_cfg != NULL) {
		fails += check("doca_flow_cfg_set_pipe_queues",
			       doca_flow_cfg_set_pipe_queues(flow_cfg, 1), DOCA_SUCCESS);
		fails += check("doca_flow_cfg_destroy", doca_flow_cfg_destroy(flow_cfg),
			       DOCA_SUCCESS);
	}

	/* No bus id: refused before any GPU or CUDA driver is looked for. */
	fails += check("doca_gpu_create(NULL)", doca_gpu_create(NULL, &gpu),
		       DOCA_ERROR_INVALID_VALUE);
	if (gpu != NULL) {
		fprintf(stderr, "consumer: doca_gpu_create(NULL) set its output\n");
		fails++;
	}
	printf("consumer: UROM, Ethernet, Flow and GPUNetIO libraries called (%s)\n",
	       fails == 0 ? "as documented" : "NOT as documented");
	return fails;
}

int main(int argc, char **argv)
{
	struct consumer_cfg cfg = {.device = "softdpu0", .repeat = 1};
	struct doca_buf_inventory *inv = NULL;
	struct doca_mmap *mmap = NULL;
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	enum doca_ctx_states state;
	struct doca_buf *buf;
	void *data;
	size_t len;
	char *mem;
	int fails = 0, i;
	doca_error_t ret;

	if (doca_log_backend_create_standard() != DOCA_SUCCESS)
		return 1;

	mem = calloc(1, CONSUMER_MEM_SIZE);
	if (mem == NULL)
		return 1;

	ret = doca_argp_init("consumer", &cfg);
	if (ret != DOCA_SUCCESS)
		goto out;
	ret = register_params();
	if (ret == DOCA_SUCCESS)
		ret = doca_argp_start(argc, argv);
	if (ret != DOCA_SUCCESS) {
		DOCA_LOG_ERR("arguments: %s", doca_error_get_descr(ret));
		goto out_argp;
	}
	printf("consumer: DOCA %s (runtime %s), device %s, repeat %d\n", doca_version(),
	       doca_version_runtime(), cfg.device, cfg.repeat);

	ret = open_device(cfg.device, &dev);
	if (ret != DOCA_SUCCESS)
		goto out_argp;
	printf("consumer: opened %s\n", cfg.device);

	ret = doca_mmap_create(&mmap);
	if (ret != DOCA_SUCCESS)
		goto out_dev;
	ret = doca_mmap_set_memrange(mmap, mem, CONSUMER_MEM_SIZE);
	if (ret == DOCA_SUCCESS)
		ret = doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	if (ret == DOCA_SUCCESS)
		ret = doca_mmap_add_dev(mmap, dev);
	if (ret == DOCA_SUCCESS)
		ret = doca_mmap_start(mmap);
	if (ret != DOCA_SUCCESS) {
		DOCA_LOG_ERR("mmap: %s", doca_error_get_descr(ret));
		goto out_mmap;
	}

	ret = doca_buf_inventory_create(4, &inv);
	if (ret != DOCA_SUCCESS)
		goto out_mmap;
	ret = doca_buf_inventory_start(inv);
	if (ret != DOCA_SUCCESS)
		goto out_inv;

	for (i = 0; i < cfg.repeat; i++) {
		ret = doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, CONSUMER_MEM_SIZE, &buf);
		if (ret != DOCA_SUCCESS) {
			DOCA_LOG_ERR("buf_get_by_addr: %s", doca_error_get_descr(ret));
			goto out_inv;
		}
		fails += check("doca_buf_set_data", doca_buf_set_data(buf, mem + 64, 128),
			       DOCA_SUCCESS);
		fails += check("doca_buf_get_data", doca_buf_get_data(buf, &data), DOCA_SUCCESS);
		fails += check("doca_buf_get_data_len", doca_buf_get_data_len(buf, &len),
			       DOCA_SUCCESS);
		if (data != mem + 64 || len != 128) {
			fprintf(stderr, "consumer: buf data: expected %p/128, got %p/%zu\n",
				(void *)(mem + 64), data, len);
			fails++;
		}
		/* Data beyond the buffer's end is refused. */
		fails += check("doca_buf_set_data past the end",
			       doca_buf_set_data(buf, mem + 64, CONSUMER_MEM_SIZE),
			       DOCA_ERROR_INVALID_VALUE);
		fails += check("doca_buf_dec_refcount", doca_buf_dec_refcount(buf, NULL),
			       DOCA_SUCCESS);
	}
	printf("consumer: %d buffer(s) taken, checked and released\n", cfg.repeat);

	ret = doca_pe_create(&pe);
	if (ret != DOCA_SUCCESS)
		goto out_inv;
	if (doca_pe_progress(pe) != 0) {
		fprintf(stderr, "consumer: doca_pe_progress on an empty PE reported progress\n");
		fails++;
	}
	fails += check("doca_ctx_get_state(NULL)", doca_ctx_get_state(NULL, &state),
		       DOCA_ERROR_INVALID_VALUE);
	fails += check("doca_pe_connect_ctx(pe, NULL)", doca_pe_connect_ctx(pe, NULL),
		       DOCA_ERROR_INVALID_VALUE);
	fails += check("doca_pe_destroy", doca_pe_destroy(pe), DOCA_SUCCESS);
	printf("consumer: PE created, progressed and destroyed\n");
	fails += check_modules();

out_inv:
	/* DOCA lets an application destroy started objects once their buffers are back. */
	if (inv != NULL)
		fails += check("doca_buf_inventory_destroy", doca_buf_inventory_destroy(inv),
			       DOCA_SUCCESS);
out_mmap:
	if (mmap != NULL)
		fails += check("doca_mmap_destroy", doca_mmap_destroy(mmap), DOCA_SUCCESS);
out_dev:
	fails += check("doca_dev_close", doca_dev_close(dev), DOCA_SUCCESS);
out_argp:
	doca_argp_destroy();
out:
	free(mem);
	if (ret != DOCA_SUCCESS || fails != 0) {
		fprintf(stderr, "consumer: FAILED (%s, %d check(s) failed)\n",
			doca_error_get_name(ret), fails);
		return 1;
	}
	printf("consumer: OK\n");
	return 0;
}
