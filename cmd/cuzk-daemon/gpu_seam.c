/* gpu_seam.c: which GPUs the daemon proves on, found and opened through gpu.h: the CUDA
 * library in a `make daemon-gpu` build, the stub (every call CUZK_E_NO_GPU) otherwise. */
#include <stdio.h>
#include <string.h>

#include "cuzk/gpu.h"
#include "cuzk/log.h"
#include "lifecycle.h"

static int ordinals[CFG_MAX_DEVICES];
static void *ctxs[CFG_MAX_DEVICES];
static char cpu_reason[CUZK_ERR_MSG_MAX + 64];
static struct engine_gpu_ops ops;

static int seam_info(void *ctx, char *name, size_t cap, uint64_t *total, uint64_t *free_b)
{
    size_t f = 0, t = 0;
    *total = *free_b = 0;
    if (!gpu_mem_info(ctx, &f, &t, NULL)) {
        *total = t;
        *free_b = f;
    }
    return gpu_device_name(gpu_ctx_device(ctx), name, cap, NULL);
}
static void seam_ctx_free(void *ctx) { gpu_ctx_free(ctx); }
static void seam_lock(void *ctx) { gpu_ctx_lock(ctx); }
static void seam_unlock(void *ctx) { gpu_ctx_unlock(ctx); }
static int seam_load_shape(void *ctx, const struct g16_shape *s, struct cuzk_error *err)
{
    return gpu_ctx_load_shape(ctx, s, err);
}
static int seam_load_pk(void *ctx, const struct g16_pk *pk, struct cuzk_error *err)
{
    return gpu_ctx_load_pk(ctx, pk, err);
}
static void seam_unload(void *ctx) { gpu_ctx_unload(ctx); }
static int seam_stage(void *ctx, const struct g16_shape *s, const struct g16_assignment *w,
                      struct cuzk_error *err)
{
    return gpu_g16_stage_witness(ctx, s, w, err);
}
static void seam_unstage(void *ctx, const struct g16_shape *s, const struct g16_assignment *w)
{
    gpu_g16_unstage_witness(ctx, s, w);
}

static void close_all(unsigned n)
{
    for (unsigned i = 0; i < n; i++) gpu_ctx_free(ctxs[i]);
}

/* "[0, 1]" */
static void list_devices(char *out, size_t cap, const struct cuzk_config *cfg)
{
    size_t k = (size_t)snprintf(out, cap, "[");
    for (unsigned i = 0; i < cfg->n_devices && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s%d", i ? ", " : "", cfg->devices[i]);
    if (k < cap) snprintf(out + k, cap - k, "]");
}

int daemon_gpu_ops(const struct engine_gpu_ops **out, const struct cuzk_config *cfg,
                   struct cuzk_error *err)
{
    memset(&ops, 0, sizeof ops);
    ops.ordinals = ordinals;
    ops.ctxs = ctxs;
    ops.info = seam_info;
    ops.ctx_free = seam_ctx_free;
    ops.lock = seam_lock;
    ops.unlock = seam_unlock;
    ops.load_shape = seam_load_shape;
    ops.load_pk = seam_load_pk;
    ops.unload = seam_unload;
    ops.host_pin = gpu_host_register;
    ops.host_unpin = gpu_host_unregister;
    ops.backend = gpu_g16_backend;
    ops.stage = seam_stage;
    ops.unstage = seam_unstage;
    ops.cpu_reason = cpu_reason;
    *out = &ops;

    struct cuzk_error cerr;
    cuzk_error_clear(&cerr);
    int n = 0;
    int crc = gpu_device_count(&n, &cerr);
    unsigned k = 0;
    if (cfg->n_devices) {
        /* The operator named GPUs: proving on the CPU instead would be a silent surprise. */
        char list[CFG_MAX_DEVICES * 6 + 4];
        list_devices(list, sizeof list, cfg);
        for (unsigned i = 0; i < cfg->n_devices; i++) {
            int dev = cfg->devices[i];
            for (unsigned j = 0; j < i; j++)
                if (cfg->devices[j] == dev) {
                    close_all(k);
                    return cuzk_fail(err, CUZK_E_INVALID_ARG,
                                     "[gpus] devices = %s names GPU %d twice", list, dev);
                }
            if (crc) {
                close_all(k);
                return cuzk_fail(err, crc, "[gpus] devices = %s: GPU %d cannot be used: %s (GPUs "
                                 "need a `make daemon-gpu` build, a driver and a device; set "
                                 "devices = [] to prove on the CPU)", list, dev, cerr.msg);
            }
            if (dev >= n) {
                close_all(k);
                return cuzk_fail(err, CUZK_E_INVALID_ARG, "[gpus] devices = %s: GPU %d does not "
                                 "exist (%d GPU(s) found: 0..%d)", list, dev, n, n - 1);
            }
            struct gpu_ctx *c = NULL;
            int rc = gpu_ctx_new(&c, dev, &cerr);
            if (rc) {
                close_all(k);
                return cuzk_fail(err, rc, "[gpus] devices = %s: GPU %d cannot be opened: %s", list,
                                 dev, cerr.msg);
            }
            ordinals[k] = dev;
            ctxs[k++] = c;
        }
    } else if (crc || n <= 0) {
        snprintf(cpu_reason, sizeof cpu_reason, "no GPU found (%s)",
                 crc ? cerr.msg : "the device count is 0");
    } else {
        for (int dev = 0; dev < n && k < CFG_MAX_DEVICES; dev++) {
            struct gpu_ctx *c = NULL;
            if (gpu_ctx_new(&c, dev, &cerr)) {
                cuzk_log(CLOG_WARN, "GPU %d cannot be opened, not using it: %s", dev, cerr.msg);
                continue;
            }
            ordinals[k] = dev;
            ctxs[k++] = c;
        }
        if (!k)
            snprintf(cpu_reason, sizeof cpu_reason, "none of the %d GPU(s) found could be opened "
                     "(%s)", n, cerr.msg);
    }
    ops.n_devices = k;
    if (!k) {
        cuzk_log(CLOG_INFO, "proving on the CPU: %s", cpu_reason);
        return CUZK_OK;
    }
    for (unsigned i = 0; i < k; i++) {
        char name[128] = "";
        size_t f = 0, t = 0;
        gpu_device_name(ordinals[i], name, sizeof name, NULL);
        gpu_mem_info(ctxs[i], &f, &t, NULL);
        cuzk_log(CLOG_INFO, "GPU %d: %s, %.1f of %.1f GiB free, %u prover workers", ordinals[i], name,
                 (double)f / (1u << 30), (double)t / (1u << 30), cfg->gpu_workers_per_device);
    }
    return CUZK_OK;
}
