/* gpu.h: the CUDA backend (plain C API): per-device contexts holding the resident SRS and
 * scratch, the Groth16 GPU backend, and the kernels (NTT, h pipeline, MSM, 0/1 sums, SpMV) as
 * host-pointer calls for tests and benchmarks. Without CUDA every call returns CUZK_E_NO_GPU.
 * See docs/gpu.md. */
#ifndef CUZK_GPU_H
#define CUZK_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/ec.h"
#include "cuzk/err.h"
#include "cuzk/ff.h"
#include "cuzk/groth16.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One context per device (explicit index; contexts of different devices share nothing).
 * A context is used by one thread at a time (gpu_g16_stage_witness excepted); workers sharing
 * a device serialise their kernel work with gpu_ctx_lock / gpu_ctx_unlock (one lock per device
 * index, process-wide, granted in the order it was asked for). */
struct gpu_ctx;

/* Number of CUDA devices (0 when there is no driver or device: returns CUZK_E_NO_GPU). */
int gpu_device_count(int *n, struct cuzk_error *err);
/* "NVIDIA H200, 132 SMs, 139.8 GiB" */
int gpu_device_name(int device, char *out, size_t cap, struct cuzk_error *err);
int gpu_ctx_new(struct gpu_ctx **out, int device, struct cuzk_error *err);
void gpu_ctx_free(struct gpu_ctx *ctx);
int gpu_ctx_device(const struct gpu_ctx *ctx);
void gpu_ctx_lock(struct gpu_ctx *ctx);
void gpu_ctx_unlock(struct gpu_ctx *ctx);
/* Free and total device memory (after the context's own allocations). */
int gpu_mem_info(struct gpu_ctx *ctx, size_t *free_b, size_t *total_b, struct cuzk_error *err);
/* CUZK_E_GPU_NOMEM "what: not enough GPU memory: need X, free Y" if bytes do not fit now.
 * Used before every large allocation; exposed for tests and the daemon's admission. */
int gpu_mem_check(struct gpu_ctx *ctx, size_t bytes, const char *what, struct cuzk_error *err);
/* Allocate (and immediately free) a device buffer of `bytes` through the backend's checked
 * allocator: the memory test uses it with an impossible size. */
int gpu_alloc_probe(struct gpu_ctx *ctx, size_t bytes, struct cuzk_error *err);

/* ---- residency: upload once, reuse for every proof (pointer identity is the key) ---- */
/* Upload h, l, a, b_g1, b_g2 of pk (CUZK_E_GPU_NOMEM if it does not fit: then the backend
 * streams the vectors from host memory per proof instead). */
int gpu_ctx_load_pk(struct gpu_ctx *ctx, const struct g16_pk *pk, struct cuzk_error *err);
/* Upload the CSR matrices, coefficient table and density index lists of s. */
int gpu_ctx_load_shape(struct gpu_ctx *ctx, const struct g16_shape *s, struct cuzk_error *err);
/* Drop resident pk / shape (call before freeing them if they were loaded). */
void gpu_ctx_unload(struct gpu_ctx *ctx);

/* ---- pinned (page-locked) host memory: DMA at full PCIe speed, truly asynchronous copies.
 * A proving key whose vectors live in pinned memory is streamed without the staging copy. */
int gpu_host_alloc_pinned(void **out, size_t bytes, struct cuzk_error *err);
void gpu_host_free_pinned(void *p);
/* Page-lock existing host memory in place (cudaHostRegister): uploads from it become direct
 * DMAs. Costs ~0.1-0.3 s per GiB once; needs RLIMIT_MEMLOCK (systemd: LimitMEMLOCK=infinity).
 * Unregister before freeing the memory. Uploads from pageable memory are staged through
 * pinned chunks filled by the CPU pool in parallel, so pinning is a speed-up, not a need. */
int gpu_host_register(void *p, size_t bytes, struct cuzk_error *err);
void gpu_host_unregister(void *p);

/* Streamed key: when the key does not fit in VRAM the backend uploads each vector (h, l, a,
 * b_g1, b_g2) into one of two device buffers from a helper thread on a dedicated upload
 * stream (through two pinned staging chunks unless the key itself is pinned), so vector k+1
 * uploads while vector k's MSM runs and h uploads during SpMV + NTT. force = true takes that
 * path even when the key fits (tests, benchmarks); CUZK_GPU_STREAM_KEY=1 in the environment
 * sets it for every new context. */
void gpu_ctx_set_stream_key(struct gpu_ctx *ctx, bool force);
/* What the last streamed-key prove did (all zero after a resident-key prove). */
struct gpu_stream_stats {
    uint64_t bytes;       /* key bytes uploaded */
    uint64_t upload_ns;   /* helper thread: first upload start to last upload end */
    uint64_t wait_ns;     /* prover thread blocked waiting for a vector */
    int buffers;          /* device buffers used (2 = double-buffered, 1 = VRAM short) */
    int staged;           /* 1: copied through the pinned staging chunks, 0: key was pinned */
};
void gpu_ctx_stream_stats(const struct gpu_ctx *ctx, struct gpu_stream_stats *out);
/* The last MSM's plan on this context: window bits and windows sorted per group (chosen by the
 * number of points and, when GPU memory is short, shrunk to fit; diagnostics and tests). */
void gpu_ctx_msm_plan(const struct gpu_ctx *ctx, unsigned *window_bits, unsigned *windows_per_group);
/* Batch-affine rounds the last MSM's first window group ran before its XYZZ accumulation. */
unsigned gpu_ctx_msm_aff_rounds(const struct gpu_ctx *ctx);
/* Whether the last h pipeline took its coset factors from the per-position table (domains
 * from 2^16 with 256 bytes per element of GPU memory free) rather than two small tables. */
bool gpu_ctx_h_shift_table(const struct gpu_ctx *ctx);
/* Batch-affine rounds the last 0/1 bitmap sum ran before its XYZZ pass (0: XYZZ only). */
unsigned gpu_ctx_sum_aff_rounds(const struct gpu_ctx *ctx);
/* Whether the last MSM took its digits from plain-scalar word planes (one window per sort). */
bool gpu_ctx_msm_digit_planes(const struct gpu_ctx *ctx);
/* Bytes of GPU working memory (scratch buffers: NTT, MSM, witness staging and streamed-key
 * buffers) this context holds; they grow on demand and are kept until gpu_ctx_free. */
size_t gpu_ctx_scratch_bytes(const struct gpu_ctx *ctx);
/* Scratch requests of the prover's MSMs served from its idle h-pipeline buffers instead of
 * scratch of their own, since the context was made (0 when none were large enough). */
uint64_t gpu_ctx_msm_loans(const struct gpu_ctx *ctx);

/* The GPU prover backend (g16_backend_fn; ctx is a struct gpu_ctx *). Loads pk and s on
 * first use if they are not resident (falls back to streaming pk if VRAM is short). Same
 * results as g16_backend_cpu, so g16_prove gives identical proof bytes for the same r, s. */
int gpu_g16_backend(struct g16_msm_results *out, const struct g16_shape *s,
                    const struct g16_pk *pk, const struct g16_assignment *w, void *ctx,
                    struct g16_timings *t, struct cuzk_error *err);

/* Witness prefetch. gpu_g16_stage_witness uploads witness w of shape s ahead of its proof into
 * one of the context's two device witness buffers, on its own stream and staging chunks; it
 * may run on any thread, also while another thread is inside gpu_g16_backend on the same
 * context (the copy engine works beside the kernels), and takes no device lock. The next
 * gpu_g16_backend call for the same assignment (same inputs/aux pointers and sizes) then
 * skips its own upload (~90 ms for a 32 GiB PoRep partition). The caller must not change the
 * witness in between, and must either prove it or call gpu_g16_unstage_witness (a staged
 * copy is known by its pointers, which a later witness may reuse). Declining is not an
 * error of the proof, whose backend call then uploads as before: CUZK_E_UNSUPPORTED before
 * the context's first proof (its working memory is not sized yet), CUZK_E_GPU_NOMEM when a
 * second witness buffer would not fit with 1 GiB to spare, CUZK_E_BUSY when both buffers
 * are in use. */
int gpu_g16_stage_witness(struct gpu_ctx *ctx, const struct g16_shape *s,
                          const struct g16_assignment *w, struct cuzk_error *err);
void gpu_g16_unstage_witness(struct gpu_ctx *ctx, const struct g16_shape *s,
                             const struct g16_assignment *w);
/* Whether the last gpu_g16_backend call on ctx found its witness staged (diagnostics, tests). */
bool gpu_ctx_last_witness_staged(const struct gpu_ctx *ctx);

/* ---- kernels on host buffers (upload, compute, download) ----
 * Same contracts as the CPU oracles in groth16.h / ec.h. */
int gpu_ntt(struct gpu_ctx *ctx, fr_t *v, unsigned lg, bool inverse, bool coset,
            struct cuzk_error *err);
int gpu_compute_h(struct gpu_ctx *ctx, fr_t *a, fr_t *b, fr_t *c, unsigned lg,
                  struct cuzk_error *err);
int gpu_g1_msm(struct gpu_ctx *ctx, g1_jac_t *out, const g1_aff_t *bases, const fr_t *scalars,
               size_t n, struct cuzk_error *err);
int gpu_g2_msm(struct gpu_ctx *ctx, g2_jac_t *out, const g2_aff_t *bases, const fr_t *scalars,
               size_t n, struct cuzk_error *err);
int gpu_g1_sum_bitmap(struct gpu_ctx *ctx, g1_jac_t *out, const g1_aff_t *bases,
                      const uint64_t *bitmap, size_t n, struct cuzk_error *err);
int gpu_g2_sum_bitmap(struct gpu_ctx *ctx, g2_jac_t *out, const g2_aff_t *bases,
                      const uint64_t *bitmap, size_t n, struct cuzk_error *err);
int gpu_eval_abc(struct gpu_ctx *ctx, fr_t *a, fr_t *b, fr_t *c, const struct g16_shape *s,
                 const struct g16_assignment *w, struct cuzk_error *err);

/* ---- benchmarks: device-resident inputs, CUDA events; ms[i] for each of reps runs (after
 * one warm-up). Points: `distinct` host points tiled to n on the device. ---- */
int gpu_bench_ntt(struct gpu_ctx *ctx, unsigned lg, int reps, double *ms, struct cuzk_error *err);
/* the same transform left in bit-reversed order (no bit-reversal pass; sppark's "NR") */
int gpu_bench_ntt_nr(struct gpu_ctx *ctx, unsigned lg, int reps, double *ms, struct cuzk_error *err);
/* natural order in and out, out of place (the bit reversal folded into the last pass) */
int gpu_bench_ntt_oop(struct gpu_ctx *ctx, unsigned lg, int reps, double *ms, struct cuzk_error *err);
int gpu_bench_h(struct gpu_ctx *ctx, unsigned lg, int reps, double *ms, struct cuzk_error *err);
/* Field product throughput, 2^lg threads x 4 chains x iters products: variant 0 Fr, 1 Fp, 2 Fr
 * capped at 72 registers; *mismatch: results that differ from the uncapped kernel's. */
int gpu_bench_fmul(struct gpu_ctx *ctx, int variant, unsigned lg, int iters, int reps, double *ms,
                   uint64_t *mismatch, struct cuzk_error *err);
/* g = 1 (G1, points are g1_aff_t) or 2 (G2, g2_aff_t); bitmap_density > 0 times the 0/1 sum
 * at that density instead of the MSM. */
int gpu_bench_msm(struct gpu_ctx *ctx, int g, size_t n, const void *points, size_t distinct,
                  double bitmap_density, int reps, double *ms, struct cuzk_error *err);

#ifdef __cplusplus
}
#endif

#endif
