/*
 * softdpu internal: the one atomic layer of code shared by the CPU and the GPU (the ring format
 * of sdp_ring.h). It compiles as C (gnu11) for the host, as C++ and under nvcc; <stdatomic.h>
 * is not used because nvcc does not accept it.
 *
 *   host (C, C++, nvcc's host pass)  GCC/Clang __atomic builtins
 *   device (nvcc, __CUDA_ARCH__)     cuda::atomic_ref<T, cuda::thread_scope_system>
 *
 * System scope on the device because every word these macros touch lives in memory that a CPU
 * thread reads or writes too (pinned host memory mapped into the GPU, or GPU memory the CPU
 * maps); narrower scopes would not order the GPU's accesses against the CPU's.
 *
 * Operations (p points to a naturally aligned uint32_t or uint64_t):
 *   SDP_ATOMIC_LOAD_RLX(p), SDP_ATOMIC_LOAD_ACQ(p)       relaxed / acquire load
 *   SDP_ATOMIC_STORE_RLX(p, v), SDP_ATOMIC_STORE_REL(p, v) relaxed / release store
 *   SDP_ATOMIC_LOAD_SC(p), SDP_ATOMIC_STORE_SC(p, v)       sequentially consistent load /
 *                                                          store (a store-then-load handshake
 *                                                          between two agents, Dekker style,
 *                                                          without a standalone fence, which
 *                                                          ThreadSanitizer cannot follow)
 *   SDP_ATOMIC_FETCH_ADD(p, v)                             acq_rel add, returns the old value
 *   SDP_ATOMIC_CAS(p, expected_p, desired)                 strong acq_rel compare-and-swap;
 *                                                          1 on success, else 0 with
 *                                                          *expected_p set to the value seen
 *   SDP_ATOMIC_FENCE()                                     sequentially consistent fence
 *
 * Read-modify-write operations (FETCH_ADD, CAS) are atomic only among agents of one kind: PCIe
 * does not make a GPU's atomic on pinned host memory atomic against the CPU's. Data shared
 * between the CPU and a GPU is therefore laid out so that every word has a single writer
 * (sdp_ring.h follows that rule), and only loads, stores and fences cross the bus.
 *
 * SDP_RING_FN marks functions for both sides: `static inline` in C and C++, `__host__ __device__
 * static inline` under nvcc.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_ATOMIC_H_
#define SDP_ATOMIC_H_

#include <stdint.h>

#if defined(__CUDACC__)
#define SDP_RING_FN __host__ __device__ static inline
#else
#define SDP_RING_FN static inline
#endif

#if defined(__CUDA_ARCH__)

#include <cuda/atomic>

template <typename T>
__device__ static inline T sdp_atomic_load_(const T *p, cuda::memory_order mo)
{
	return cuda::atomic_ref<T, cuda::thread_scope_system>(*const_cast<T *>(p)).load(mo);
}

template <typename T, typename V>
__device__ static inline void sdp_atomic_store_(T *p, V v, cuda::memory_order mo)
{
	cuda::atomic_ref<T, cuda::thread_scope_system>(*p).store(static_cast<T>(v), mo);
}

template <typename T, typename V>
__device__ static inline T sdp_atomic_fetch_add_(T *p, V v)
{
	return cuda::atomic_ref<T, cuda::thread_scope_system>(*p).fetch_add(
		static_cast<T>(v), cuda::memory_order_acq_rel);
}

template <typename T, typename V>
__device__ static inline int sdp_atomic_cas_(T *p, T *exp, V v)
{
	return cuda::atomic_ref<T, cuda::thread_scope_system>(*p).compare_exchange_strong(
		       *exp, static_cast<T>(v), cuda::memory_order_acq_rel,
		       cuda::memory_order_acquire) ?
		       1 :
		       0;
}

#define SDP_ATOMIC_LOAD_RLX(p) sdp_atomic_load_((p), cuda::memory_order_relaxed)
#define SDP_ATOMIC_LOAD_ACQ(p) sdp_atomic_load_((p), cuda::memory_order_acquire)
#define SDP_ATOMIC_STORE_RLX(p, v) sdp_atomic_store_((p), (v), cuda::memory_order_relaxed)
#define SDP_ATOMIC_STORE_REL(p, v) sdp_atomic_store_((p), (v), cuda::memory_order_release)
#define SDP_ATOMIC_LOAD_SC(p) sdp_atomic_load_((p), cuda::memory_order_seq_cst)
#define SDP_ATOMIC_STORE_SC(p, v) sdp_atomic_store_((p), (v), cuda::memory_order_seq_cst)
#define SDP_ATOMIC_FETCH_ADD(p, v) sdp_atomic_fetch_add_((p), (v))
#define SDP_ATOMIC_CAS(p, expected_p, desired) sdp_atomic_cas_((p), (expected_p), (desired))
#define SDP_ATOMIC_FENCE()                                                                         \
	cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system)
/* Polite pause inside a bounded poll loop. */
#define SDP_CPU_RELAX() __nanosleep(32)

#else /* host */

#define SDP_ATOMIC_LOAD_RLX(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define SDP_ATOMIC_LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define SDP_ATOMIC_STORE_RLX(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define SDP_ATOMIC_STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define SDP_ATOMIC_LOAD_SC(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define SDP_ATOMIC_STORE_SC(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define SDP_ATOMIC_FETCH_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define SDP_ATOMIC_CAS(p, expected_p, desired)                                                     \
	(__atomic_compare_exchange_n((p), (expected_p), (desired), 0, __ATOMIC_ACQ_REL,            \
				     __ATOMIC_ACQUIRE) ?                                           \
		 1 :                                                                               \
		 0)
#if defined(__SANITIZE_THREAD__)
/*
 * GCC refuses standalone fences under -fsanitize=thread (ThreadSanitizer cannot model them). A
 * sequentially consistent read-modify-write is a full barrier on the CPUs softdpu runs on and
 * is what ThreadSanitizer understands; the ring itself uses no standalone fence.
 */
static uint32_t sdp_atomic_tsan_fence_word __attribute__((unused));
#define SDP_ATOMIC_FENCE()                                                                         \
	((void)__atomic_fetch_add(&sdp_atomic_tsan_fence_word, 0u, __ATOMIC_SEQ_CST))
#else
#define SDP_ATOMIC_FENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif
#if defined(__x86_64__) || defined(__i386__)
#define SDP_CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define SDP_CPU_RELAX() __asm__ __volatile__("yield" ::: "memory")
#else
#define SDP_CPU_RELAX() __asm__ __volatile__("" ::: "memory")
#endif

#endif /* __CUDA_ARCH__ */

#endif /* SDP_ATOMIC_H_ */
