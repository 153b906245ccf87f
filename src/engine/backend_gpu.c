/* backend_gpu.c: GPUs behind the engine's backend interface, found and opened through gpu.h:
 * the CUDA library in a `make daemon-gpu` build, the stub (every call CUZK_E_NO_GPU)
 * otherwise, so this file needs no #ifdef. One gpu_ctx per device; the engine's device index
 * d is the index into ctx[]. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/gpu.h"
#include "cuzk/log.h"
#include "engine_internal.h"

struct gpu_backend {
    unsigned n;
    struct gpu_ctx *ctx[ENGINE_MAX_DEVICES];
};

static struct gpu_ctx *ctx_of(void *self, unsigned d) { return ((struct gpu_backend *)self)->ctx[d]; }

static int g_prove(void *self, unsigned d, struct g16_msm_results *out, const struct g16_shape *s,
                   const struct g16_pk *pk, const struct g16_assignment *w, struct g16_timings *t,
                   struct cuzk_error *err)
{
    return gpu_g16_backend(out, s, pk, w, ctx_of(self, d), t, err);
}

static int g_prove_beside(void *self, unsigned d, struct g16_msm_results *out, const struct g16_shape *s,
                          const struct g16_pk *pk, const struct g16_assignment *w, struct g16_timings *t,
                          struct cuzk_error *err)
{
    return gpu_g16_backend_beside(out, s, pk, w, ctx_of(self, d), t, err);
}

static int g_info(void *self, unsigned d, char *name, size_t cap, uint64_t *total, uint64_t *free_b)
{
    struct gpu_ctx *c = ctx_of(self, d);
    size_t f = 0, tb = 0;
    *total = *free_b = 0;
    if (!gpu_mem_info(c, &f, &tb, NULL)) {
        *total = tb;
        *free_b = f;
    }
    return gpu_device_name(gpu_ctx_device(c), name, cap, NULL);
}

static void g_lock(void *self, unsigned d) { gpu_ctx_lock(ctx_of(self, d)); }
static void g_unlock(void *self, unsigned d) { gpu_ctx_unlock(ctx_of(self, d)); }

static int g_load_shape(void *self, unsigned d, const struct g16_shape *s, struct cuzk_error *err)
{
    return gpu_ctx_load_shape(ctx_of(self, d), s, err);
}

static int g_load_pk(void *self, unsigned d, const struct g16_pk *pk, struct cuzk_error *err)
{
    return gpu_ctx_load_pk(ctx_of(self, d), pk, err);
}

static void g_unload(void *self, unsigned d) { gpu_ctx_unload(ctx_of(self, d)); }

static int g_stage(void *self, unsigned d, const struct g16_shape *s, const struct g16_assignment *w,
                   struct cuzk_error *err)
{
    return gpu_g16_stage_witness(ctx_of(self, d), s, w, err);
}

static void g_unstage(void *self, unsigned d, const struct g16_shape *s, const struct g16_assignment *w)
{
    gpu_g16_unstage_witness(ctx_of(self, d), s, w);
}

static int g_pin(void *self, void *p, size_t bytes, struct cuzk_error *err)
{
    (void)self;
    return gpu_host_register(p, bytes, err);
}

static void g_unpin(void *self, void *p)
{
    (void)self;
    gpu_host_unregister(p);
}

static void g_pinned(void *self, uint64_t *now, uint64_t *peak)
{
    (void)self;
    gpu_host_pinned_bytes(now, peak);
}

/* Key validation runs on the first device, under its lock (a load may overlap proofs). */
static int g_check_g1(void *self, const g1_aff_t *pts, size_t n, bool subgroup, size_t *bad,
                      struct cuzk_error *err)
{
    gpu_ctx_lock(ctx_of(self, 0));
    int rc = gpu_g1_check_points(ctx_of(self, 0), pts, n, subgroup, bad, err);
    gpu_ctx_unlock(ctx_of(self, 0));
    return rc;
}
static int g_check_g2(void *self, const g2_aff_t *pts, size_t n, bool subgroup, size_t *bad,
                      struct cuzk_error *err)
{
    gpu_ctx_lock(ctx_of(self, 0));
    int rc = gpu_g2_check_points(ctx_of(self, 0), pts, n, subgroup, bad, err);
    gpu_ctx_unlock(ctx_of(self, 0));
    return rc;
}

static void g_destroy(void *self)
{
    struct gpu_backend *b = self;
    if (!b) return;
    for (unsigned i = 0; i < b->n; i++) gpu_ctx_free(b->ctx[i]);
    free(b);
}

static const struct engine_backend_ops gpu_ops = {
    .prove = g_prove, .info = g_info, .lock = g_lock, .unlock = g_unlock,
    .load_shape = g_load_shape, .load_pk = g_load_pk, .unload = g_unload, .prove_beside = g_prove_beside,
    .stage = g_stage,
    .unstage = g_unstage, .host_pin = g_pin, .host_unpin = g_unpin, .host_pinned = g_pinned, .check_g1 = g_check_g1,
    .check_g2 = g_check_g2, .destroy = g_destroy,
    .load_pk_copies = true,
};

/* "[0, 1]" */
static void list_devices(char *out, size_t cap, const struct engine_gpu_config *c)
{
    size_t k = (size_t)snprintf(out, cap, "[");
    for (unsigned i = 0; i < c->n_devices && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s%d", i ? ", " : "", c->devices[i]);
    if (k < cap) snprintf(out + k, cap - k, "]");
}

/* Open device dev as the backend's next context, with the operator's options set before
 * anything is allocated on it. */
static int open_device(struct gpu_backend *b, int *ordinals, int dev, const struct gpu_options *opt,
                       struct cuzk_error *err)
{
    struct gpu_ctx *c = NULL;
    int rc = gpu_ctx_new(&c, dev, err);
    if (rc) return rc;
    gpu_ctx_set_options(c, opt);
    ordinals[b->n] = dev;
    b->ctx[b->n++] = c;
    return CUZK_OK;
}

/* Fail with the device list named: the engine_backend_gpu error path closes what is open. */
static int fail_listed(struct gpu_backend *b, struct cuzk_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_listed(struct gpu_backend *b, struct cuzk_error *err, int code, const char *fmt, ...)
{
    char msg[CUZK_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    g_destroy(b);
    return cuzk_fail(err, code, "%s", msg);
}

int engine_backend_gpu(struct engine_backend *out, const struct engine_gpu_config *cfg,
                       struct cuzk_error *err)
{
    engine_backend_cpu(out, NULL);
    struct gpu_backend *b = calloc(1, sizeof *b);
    if (!b) return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    const struct gpu_options *opt = &cfg->options;
    struct cuzk_error cerr;
    cuzk_error_clear(&cerr);
    int n = 0;
    int crc = gpu_device_count(&n, &cerr);
    char reason[ENGINE_REASON_MAX] = "";
    if (cfg->n_devices) {
        /* The operator named GPUs: proving on the CPU instead would be a silent surprise. */
        char list[ENGINE_MAX_DEVICES * 6 + 4];
        list_devices(list, sizeof list, cfg);
        if (cfg->n_devices > ENGINE_MAX_DEVICES)
            return fail_listed(b, err, CUZK_E_INVALID_ARG, "[gpus] devices = %s: at most %d GPUs",
                               list, ENGINE_MAX_DEVICES);
        for (unsigned i = 0; i < cfg->n_devices; i++) {
            int dev = cfg->devices[i];
            for (unsigned j = 0; j < i; j++)
                if (cfg->devices[j] == dev)
                    return fail_listed(b, err, CUZK_E_INVALID_ARG,
                                       "[gpus] devices = %s names GPU %d twice", list, dev);
            if (crc)
                return fail_listed(b, err, crc, "[gpus] devices = %s: GPU %d cannot be used: %s "
                                   "(GPUs need a `make daemon-gpu` build, a driver and a device; "
                                   "set devices = [] to prove on the CPU)", list, dev, cerr.msg);
            if (dev >= n)
                return fail_listed(b, err, CUZK_E_INVALID_ARG, "[gpus] devices = %s: GPU %d does "
                                   "not exist (%d GPU(s) found: 0..%d)", list, dev, n, n - 1);
            int rc = open_device(b, out->ordinals, dev, opt, &cerr);
            if (rc)
                return fail_listed(b, err, rc, "[gpus] devices = %s: GPU %d cannot be opened: %s",
                                   list, dev, cerr.msg);
        }
    } else if (crc || n <= 0) {
        snprintf(reason, sizeof reason, "no GPU found (%s)", crc ? cerr.msg : "the device count is 0");
    } else {
        for (int dev = 0; dev < n && b->n < ENGINE_MAX_DEVICES; dev++)
            if (open_device(b, out->ordinals, dev, opt, &cerr))
                cuzk_log(CLOG_WARN, "GPU %d cannot be opened, not using it: %s", dev, cerr.msg);
        if (!b->n)
            snprintf(reason, sizeof reason, "none of the %d GPU(s) found could be opened (%s)", n,
                     cerr.msg);
    }
    if (!b->n) {
        g_destroy(b);
        engine_backend_cpu(out, reason);
        cuzk_log(CLOG_INFO, "proving on the CPU: %s", reason);
        return CUZK_OK;
    }
    out->ops = &gpu_ops;
    out->self = b;
    out->n_devices = b->n;
    out->cpu_reason[0] = 0;
    for (unsigned i = 0; i < b->n; i++) {
        char name[128] = "";
        size_t f = 0, t = 0;
        gpu_device_name(out->ordinals[i], name, sizeof name, NULL);
        gpu_mem_info(b->ctx[i], &f, &t, NULL);
        cuzk_log(CLOG_INFO, "GPU %d: %s, %.1f of %.1f GiB free, %u prover workers", out->ordinals[i],
                 name, (double)f / (1u << 30), (double)t / (1u << 30), cfg->workers_per_device);
    }
    return CUZK_OK;
}
