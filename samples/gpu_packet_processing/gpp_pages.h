/*
 * The built-in pages of softdpu's GPU packet processing application: one definition for the
 * CPU mode's table (gpu_packet_processing.c) and the kernels' copy in GPU memory
 * (gpp_kernels.cu).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GPP_PAGES_H_
#define GPP_PAGES_H_

#define GPP_PAGE_INDEX                                                                             \
	"<!DOCTYPE html>\n<html><head><title>softdpu</title></head>"                               \
	"<body><h1>softdpu GPU packet processing</h1></body></html>\n"
#define GPP_PAGE_HELLO "hello from softdpu\n"

#endif /* GPP_PAGES_H_ */
