/* gpu_stub.c: the GPU API for builds without CUDA: every call fails with CUZK_E_NO_GPU, so
 * the CPU build links and runs unchanged. Defines exactly the symbols of include/cuzk/gpu.h. */
#include "cuzk/gpu.h"

#define NO_GPU(err) cuzk_fail(err, CUZK_E_NO_GPU, "gpu: this build has no CUDA support (build with `make gpu`)")

int gpu_device_count(int *n, struct cuzk_error *err)
{
    *n = 0;
    return NO_GPU(err);
}
int gpu_device_name(int device, char *out, size_t cap, struct cuzk_error *err)
{
    (void)device;
    if (cap) out[0] = 0;
    return NO_GPU(err);
}
int gpu_ctx_new(struct gpu_ctx **out, int device, struct cuzk_error *err)
{
    (void)device;
    *out = NULL;
    return NO_GPU(err);
}
void gpu_ctx_free(struct gpu_ctx *ctx) { (void)ctx; }
int gpu_ctx_device(const struct gpu_ctx *ctx) { (void)ctx; return -1; }
void gpu_ctx_lock(struct gpu_ctx *ctx) { (void)ctx; }
void gpu_ctx_unlock(struct gpu_ctx *ctx) { (void)ctx; }
int gpu_mem_info(struct gpu_ctx *ctx, size_t *free_b, size_t *total_b, struct cuzk_error *err)
{
    (void)ctx;
    *free_b = *total_b = 0;
    return NO_GPU(err);
}
int gpu_mem_check(struct gpu_ctx *ctx, size_t bytes, const char *what, struct cuzk_error *err)
{
    (void)ctx, (void)bytes, (void)what;
    return NO_GPU(err);
}
int gpu_alloc_probe(struct gpu_ctx *ctx, size_t bytes, struct cuzk_error *err)
{
    (void)ctx, (void)bytes;
    return NO_GPU(err);
}
int gpu_ctx_load_pk(struct gpu_ctx *ctx, const struct g16_pk *pk, struct cuzk_error *err)
{
    (void)ctx, (void)pk;
    return NO_GPU(err);
}
int gpu_ctx_load_shape(struct gpu_ctx *ctx, const struct g16_shape *s, struct cuzk_error *err)
{
    (void)ctx, (void)s;
    return NO_GPU(err);
}
void gpu_ctx_unload(struct gpu_ctx *ctx) { (void)ctx; }
int gpu_g16_backend(struct g16_msm_results *out, const struct g16_shape *s,
                    const struct g16_pk *pk, const struct g16_assignment *w, void *ctx,
                    struct g16_timings *t, struct cuzk_error *err)
{
    (void)out, (void)s, (void)pk, (void)w, (void)ctx, (void)t;
    return NO_GPU(err);
}
int gpu_g16_backend_beside(struct g16_msm_results *out, const struct g16_shape *s,
                           const struct g16_pk *pk, const struct g16_assignment *w, void *ctx,
                           struct g16_timings *t, struct cuzk_error *err)
{
    (void)out, (void)s, (void)pk, (void)w, (void)ctx, (void)t;
    return NO_GPU(err);
}
int gpu_g16_stage_witness(struct gpu_ctx *ctx, const struct g16_shape *s,
                          const struct g16_assignment *w, struct cuzk_error *err)
{
    (void)ctx, (void)s, (void)w;
    return NO_GPU(err);
}
void gpu_g16_unstage_witness(struct gpu_ctx *ctx, const struct g16_shape *s,
                             const struct g16_assignment *w)
{
    (void)ctx, (void)s, (void)w;
}
int gpu_ntt(struct gpu_ctx *ctx, fr_t *v, unsigned lg, bool inverse, bool coset,
            struct cuzk_error *err)
{
    (void)ctx, (void)v, (void)lg, (void)inverse, (void)coset;
    return NO_GPU(err);
}
int gpu_compute_h(struct gpu_ctx *ctx, fr_t *a, fr_t *b, fr_t *c, unsigned lg,
                  struct cuzk_error *err)
{
    (void)ctx, (void)a, (void)b, (void)c, (void)lg;
    return NO_GPU(err);
}
int gpu_g1_msm(struct gpu_ctx *ctx, g1_jac_t *out, const g1_aff_t *bases, const fr_t *scalars,
               size_t n, struct cuzk_error *err)
{
    (void)ctx, (void)out, (void)bases, (void)scalars, (void)n;
    return NO_GPU(err);
}
int gpu_g2_msm(struct gpu_ctx *ctx, g2_jac_t *out, const g2_aff_t *bases, const fr_t *scalars,
               size_t n, struct cuzk_error *err)
{
    (void)ctx, (void)out, (void)bases, (void)scalars, (void)n;
    return NO_GPU(err);
}
int gpu_g1_sum_bitmap(struct gpu_ctx *ctx, g1_jac_t *out, const g1_aff_t *bases,
                      const uint64_t *bitmap, size_t n, struct cuzk_error *err)
{
    (void)ctx, (void)out, (void)bases, (void)bitmap, (void)n;
    return NO_GPU(err);
}
int gpu_g2_sum_bitmap(struct gpu_ctx *ctx, g2_jac_t *out, const g2_aff_t *bases,
                      const uint64_t *bitmap, size_t n, struct cuzk_error *err)
{
    (void)ctx, (void)out, (void)bases, (void)bitmap, (void)n;
    return NO_GPU(err);
}
int gpu_eval_abc(struct gpu_ctx *ctx, fr_t *a, fr_t *b, fr_t *c, const struct g16_shape *s,
                 const struct g16_assignment *w, struct cuzk_error *err)
{
    (void)ctx, (void)a, (void)b, (void)c, (void)s, (void)w;
    return NO_GPU(err);
}
int gpu_host_alloc_pinned(void **out, size_t bytes, struct cuzk_error *err)
{
    (void)bytes;
    *out = NULL;
    return NO_GPU(err);
}
void gpu_host_free_pinned(void *p) { (void)p; }
int gpu_host_register(void *p, size_t bytes, struct cuzk_error *err)
{
    (void)p, (void)bytes;
    return NO_GPU(err);
}
void gpu_host_unregister(void *p) { (void)p; }
void gpu_host_pinned_bytes(uint64_t *now, uint64_t *peak) { *now = *peak = 0; }
void gpu_ctx_set_options(struct gpu_ctx *ctx, const struct gpu_options *opt) { (void)ctx, (void)opt; }

int gpu_g1_fixed_base(struct gpu_ctx *ctx, g1_aff_t *out, const g1_aff_t *gen, const fr_t *sc,
                      size_t n, struct cuzk_error *err)
{
    (void)ctx, (void)out, (void)gen, (void)sc, (void)n;
    return NO_GPU(err);
}

int gpu_g2_fixed_base(struct gpu_ctx *ctx, g2_aff_t *out, const g2_aff_t *gen, const fr_t *sc,
                      size_t n, struct cuzk_error *err)
{
    (void)ctx, (void)out, (void)gen, (void)sc, (void)n;
    return NO_GPU(err);
}

int gpu_g1_check_points(struct gpu_ctx *ctx, const g1_aff_t *pts, size_t n, bool subgroup,
                        size_t *bad, struct cuzk_error *err)
{
    (void)ctx, (void)pts, (void)n, (void)subgroup;
    *bad = n;
    return NO_GPU(err);
}

int gpu_g2_check_points(struct gpu_ctx *ctx, const g2_aff_t *pts, size_t n, bool subgroup,
                        size_t *bad, struct cuzk_error *err)
{
    (void)ctx, (void)pts, (void)n, (void)subgroup;
    *bad = n;
    return NO_GPU(err);
}
