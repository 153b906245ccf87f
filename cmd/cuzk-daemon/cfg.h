/* cfg.h: the daemon's configuration (cuzk-daemon only; the engine gets an engine_config made
 * from it in main.c): a TOML-subset reader, upstream cuzk's sections and keys, built-in
 * defaults (an empty file is valid) and validation with line-numbered errors.
 * See docs/daemon.md ("Configuration"). */
#ifndef CUZK_DAEMON_CFG_H
#define CUZK_DAEMON_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"

#define CFG_MAX_DEVICES 16
#define CFG_MAX_PRELOAD 16
#define CFG_STR_MAX 512

/* Every field has a default (cfg_defaults); sizes in bytes, durations in milliseconds. */
struct cuzk_config {
    /* [daemon] */
    char listen[CFG_STR_MAX];            /* "unix:///path" or "host:port" */
    char status_listen[CFG_STR_MAX];     /* HTTP "ip:port"; "" = off */
    uint64_t max_message_size;           /* gRPC receive/send limit, bytes */
    uint64_t shutdown_grace_ms;          /* how long running partitions may finish on SIGTERM */
    uint64_t result_retention_ms;        /* how long finished results are kept for AwaitProof */
    uint32_t result_retention_count;     /* and at most this many */
    char state_dir[CFG_STR_MAX];         /* the job journal's directory; "" = derived from
                                          * listen (durable_state_dir), "off" = none */
    /* [memory] */
    bool budget_auto;                    /* total_budget = "auto" */
    uint64_t total_budget;               /* bytes when !budget_auto */
    uint64_t safety_margin;              /* bytes subtracted from MemTotal when auto */
    uint64_t eviction_min_idle_ms;
    /* [gpus] */
    int devices[CFG_MAX_DEVICES];        /* explicit ordinals; n_devices = 0 = all found */
    unsigned n_devices;
    unsigned gpu_threads;                /* CPU threads for the GPU backend; 0 = all CPUs */
    unsigned gpu_workers_per_device;     /* >= 1; also the CPU prover count without GPUs */
    uint64_t gpu_vram_reserve_mib;       /* device memory left to other processes, MiB */
    bool gpu_stream_key;                 /* stream the key per proof even when it fits */
    bool gpu_trace;                      /* a stderr line per device allocation and MSM plan */
    /* [scheduler] */
    unsigned max_batch_size;             /* accepted; batching is not implemented (warned) */
    uint64_t max_batch_wait_ms;
    bool sort_by_type;
    /* [synthesis] */
    unsigned synthesis_threads;          /* shared compute pool size; 0 = all CPUs */
    /* [pipeline] */
    bool pipeline_enabled;
    unsigned synthesis_lookahead, synthesis_concurrency, slot_size, max_gpu_queue_depth;
    unsigned max_parallel_synthesis;     /* synthesis workers; 0 = min(CPUs, 18), >= 2 */
    /* [srs] */
    char param_cache[CFG_STR_MAX];
    char preload[CFG_MAX_PRELOAD][64];   /* circuit ids loaded at startup */
    unsigned n_preload;
    char srs_validation[8];              /* "full" | "curve" | "none" (parameter checks at load) */
    /* [logging] */
    char log_level[16];                  /* error|warn|info|debug|trace */
    bool log_json;                       /* format = "json" */
};

/* Fill c with the built-in defaults (what an empty file means). */
void cfg_defaults(struct cuzk_config *c);

/* The embedded default configuration file (documented TOML; parses to cfg_defaults). */
extern const char cfg_default_toml[];

/* Called once per warning (unknown key, deprecated or ineffective key); msg names file:line. */
typedef void (*cfg_warn_fn)(void *ctx, const char *msg);

/* Parse TOML text over the current contents of c (so call cfg_defaults first). name is used
 * in messages ("cuzk.toml:14: [memory] total_budget = "64XB": expected a size like "64GiB"
 * or "auto""). Syntax errors and invalid values fail with CUZK_E_FORMAT; unknown keys only
 * warn. */
int cfg_parse(struct cuzk_config *c, const char *text, size_t len, const char *name,
              cfg_warn_fn warn, void *warn_ctx, struct cuzk_error *err);
/* Read and parse a file; CUZK_E_IO (naming the path) if it cannot be read. */
int cfg_load_file(struct cuzk_config *c, const char *path, cfg_warn_fn warn, void *warn_ctx,
                  struct cuzk_error *err);

/* Value parsers shared with the CLIs. Return false on a malformed value. */
bool cfg_parse_size(uint64_t *out, const char *s);       /* "64GiB", "512MB", "4096" */
bool cfg_parse_duration_ms(uint64_t *out, const char *s); /* "5m", "30s", "250ms", "1h", "300" */

#endif
