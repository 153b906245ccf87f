/* gpu.h: the CUDA backend's API for the prover (plain C): per-device contexts holding the
 * resident SRS and scratch, the operator's options, the Groth16 GPU backend with witness
 * prefetch, and the kernels (NTT, h pipeline, MSM, 0/1 sums, SpMV) on host buffers with the
 * CPU oracles' contracts. Without CUDA every call returns CUZK_E_NO_GPU. The knobs, benchmarks
 * and diagnostics for cuzk-bench-gpu and the GPU tests are in src/gpu/gpu_tuning.h. See
 * docs/gpu.md. */
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
/* Page-locked host memory this process holds through the four functions above (allocated
 * plus registered), now and at its highest since the process started: what the daemon
 * reports beside its resident set. 0 and 0 without CUDA. */
void gpu_host_pinned_bytes(uint64_t *now, uint64_t *peak);

/* What an operator may set per device (the daemon's [gpus] section, docs/daemon.md). All
 * zero is the default. */
struct gpu_options {
    /* Device memory the backend never takes, left to other processes on the card. */
    size_t reserve_bytes;
    /* Stream the proving key from host memory for every proof even when it fits in VRAM:
     * each vector (h, l, a, b_g1, b_g2) is uploaded into one of two device buffers from a
     * helper thread while the previous vector's MSM runs (through pinned staging chunks
     * unless the key itself is pinned). A key that does not fit is always streamed. */
    bool stream_key;
    /* One stderr line per device allocation and per MSM plan (memory diagnostics). */
    bool trace;
    /* Use at most this many bytes of the card, as if it were that small ([gpus]
     * memory_limit; 0: the whole card). Counted from the free memory when the context
     * opened, so what other processes take later also counts against it. */
    size_t mem_limit_bytes;
};
void gpu_ctx_set_options(struct gpu_ctx *ctx, const struct gpu_options *opt);
/* The GPU prover backend (g16_backend_fn; ctx is a struct gpu_ctx *). Loads pk and s on
 * first use if they are not resident (falls back to streaming pk if VRAM is short). Same
 * results as g16_backend_cpu, so g16_prove gives identical proof bytes for the same r, s. */
int gpu_g16_backend(struct g16_msm_results *out, const struct g16_shape *s,
                    const struct g16_pk *pk, const struct g16_assignment *w, void *ctx,
                    struct g16_timings *t, struct cuzk_error *err);
/* The backend for a circuit other than the one resident on ctx (the daemon's prove_beside):
 * the same results, with pk streamed and s loaded for this call only, beside the resident key
 * and shape, which stay as they are. CUZK_E_GPU_NOMEM, with nothing changed, when the memory
 * plan (gpu_plan.h) finds no room beside them. With nothing resident, or pk or s the resident
 * one, it is gpu_g16_backend. */
int gpu_g16_backend_beside(struct g16_msm_results *out, const struct g16_shape *s,
                           const struct g16_pk *pk, const struct g16_assignment *w, void *ctx,
                           struct g16_timings *t, struct cuzk_error *err);

/* Witness prefetch. gpu_g16_stage_witness uploads witness w of shape s ahead of its proof into
 * one of the context's two device witness buffers, on its own stream and staging chunks; it
 * may run on any thread, also while another thread is inside gpu_g16_backend on the same
 * context (the copy engine works beside the kernels), and takes no device lock. The next
 * gpu_g16_backend call for the same assignment (same inputs/aux pointers and sizes) then
 * skips its own upload (4 GiB for a 32 GiB PoRep partition). The caller must not change the
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

/* ---- trusted setup and key validation (setup.cu) ----
 * out[i] = sc[i] * gen (affine, (0, 0) for a zero scalar) for n Montgomery scalars: the
 * fixed-base multiplications of g16_setup (struct g16_fixed_base), same bytes as the CPU's. */
int gpu_g1_fixed_base(struct gpu_ctx *ctx, g1_aff_t *out, const g1_aff_t *gen, const fr_t *sc,
                      size_t n, struct cuzk_error *err);
int gpu_g2_fixed_base(struct gpu_ctx *ctx, g2_aff_t *out, const g2_aff_t *gen, const fr_t *sc,
                      size_t n, struct cuzk_error *err);
/* *bad = the index of the first of n points that is off the curve or (subgroup) outside the
 * prime-order subgroup, n if none: g1_aff_is_on_curve / g1_aff_in_subgroup on every point. */
int gpu_g1_check_points(struct gpu_ctx *ctx, const g1_aff_t *pts, size_t n, bool subgroup,
                        size_t *bad, struct cuzk_error *err);
int gpu_g2_check_points(struct gpu_ctx *ctx, const g2_aff_t *pts, size_t n, bool subgroup,
                        size_t *bad, struct cuzk_error *err);

#ifdef __cplusplus
}
#endif

#endif
