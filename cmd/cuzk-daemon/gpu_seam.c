/* gpu_seam.c: which GPUs the daemon proves on. Without a CUDA build (no CUZK_DAEMON_GPU) the
 * engine runs CPU provers; with one, every device found (or [gpus] devices) gets
 * gpus.gpu_workers_per_device workers sharing one context and one mutex. */
#include <stdio.h>

#include "lifecycle.h"

#ifndef CUZK_DAEMON_GPU
#define CUZK_DAEMON_GPU 0
#endif

#if CUZK_DAEMON_GPU
#include "cuzk/gpu.h"
#include "cuzk/log.h"

static int ordinals[CFG_MAX_DEVICES];
static struct engine_gpu_ops ops;

static int seam_info(void *user, int ordinal, char *name, size_t cap, uint64_t *total, uint64_t *free_b)
{
    (void)user;
    *total = *free_b = 0;
    return gpu_device_name(ordinal, name, cap, NULL);
}
static void *seam_ctx_new(void *user, int ordinal, unsigned threads, struct cuzk_error *err)
{
    (void)user; (void)threads;
    struct gpu_ctx *c = NULL;
    return gpu_ctx_new(&c, ordinal, err) ? NULL : c;
}
static void seam_ctx_free(void *ctx) { gpu_ctx_free(ctx); }
static void seam_unload(void *ctx) { gpu_ctx_unload(ctx); }

const struct engine_gpu_ops *daemon_gpu_ops(const struct cuzk_config *cfg)
{
    int n = 0;
    if (gpu_device_count(&n, NULL) || n <= 0) {
        cuzk_log(CLOG_INFO, "no GPU found; proving on the CPU");
        return NULL;
    }
    unsigned k = 0;
    if (cfg->n_devices) {
        for (unsigned i = 0; i < cfg->n_devices; i++)
            if (cfg->devices[i] < n) ordinals[k++] = cfg->devices[i];
            else cuzk_log(CLOG_WARN, "[gpus] devices: GPU %d does not exist (%d found)", cfg->devices[i], n);
    } else {
        for (int i = 0; i < n && k < CFG_MAX_DEVICES; i++) ordinals[k++] = i;
    }
    if (!k) return NULL;
    ops.n_devices = k;
    ops.ordinals = ordinals;
    ops.info = seam_info;
    ops.ctx_new = seam_ctx_new;
    ops.ctx_free = seam_ctx_free;
    ops.unload = seam_unload;
    ops.backend = gpu_g16_backend;
    return &ops;
}
#else
const struct engine_gpu_ops *daemon_gpu_ops(const struct cuzk_config *cfg)
{
    (void)cfg;
    return NULL;
}
#endif
