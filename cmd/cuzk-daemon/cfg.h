/* cfg.h: the daemon's configuration (cuzk-daemon only; the engine gets an engine_config made
 * from it in main.c): upstream cuzk's sections and keys, read by the TOML-subset reader
 * (toml.h), built-in defaults (an empty file is valid) and validation with line-numbered errors.
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
#define CFG_SUN_PATH_MAX 107   /* bytes of a unix socket path (sockaddr_un.sun_path - 1) */

/* Every field has a default (cfg_defaults); sizes in bytes, durations in milliseconds. */
struct cuzk_config {
    /* [daemon] */
    char listen[CFG_STR_MAX];            /* "unix:///path" or "host:port" */
    char status_listen[CFG_STR_MAX];     /* HTTP "ip:port"; "" = off */
    uint64_t max_message_size;           /* gRPC receive/send limit, bytes */
    uint64_t shutdown_grace_ms;          /* how long running partitions may finish on SIGTERM */
    uint64_t result_retention_ms;        /* how long finished results are kept for AwaitProof */
    uint32_t result_retention_count;     /* and at most this many */
    char state_dir[CFG_STR_MAX];         /* the job journal's directory; "" = beside the
                                          * instance lock (durable_state_dir), "off" = none */
    /* security ([daemon]; docs/daemon.md "Running cuzk on a separate GPU host") */
    char tls_cert[CFG_STR_MAX];          /* PEM server certificate (chain); "" = plaintext */
    char tls_key[CFG_STR_MAX];           /* PEM private key of tls_cert */
    char tls_client_ca[CFG_STR_MAX];     /* PEM CA that client certificates must chain to
                                          * (mutual TLS); "" = no client certificate asked */
    char auth_token_file[CFG_STR_MAX];   /* file holding the bearer token; "" = none */
    bool allow_insecure_remote;          /* a non-loopback listener without TLS nor token */
    unsigned socket_mode;                /* permission bits of the unix socket (0660) */
    /* admission */
    uint32_t max_queued_jobs;            /* unfinished jobs accepted at once */
    uint32_t max_waiters;                /* AwaitProof / Prove calls waiting at once */
    uint32_t max_large_requests;         /* requests over 1 MiB decoded at once */
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
    uint64_t gpu_memory_limit;           /* bytes of each GPU the daemon may use (0: all) */
    bool gpu_trace;                      /* a stderr line per device allocation and MSM plan */
    char nvml_library[CFG_STR_MAX];      /* GPU telemetry library path or soname; "off" = none */
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

/* Checks of a parsed configuration against this machine and build, run by --check-config
 * and at every start (so what --check-config accepts can start): the listen path fits a
 * socket address and is not in /proc or /sys; TCP hosts resolve; a listener on a
 * non-loopback address has TLS or a token (else allow_insecure_remote, warned); TLS files
 * parse and the key matches the certificate; the token file holds a usable token; listed
 * GPUs exist in this build; a safety_margin that leaves no budget is warned with the budget
 * that results. CUZK_E_INVALID_ARG naming the key, the value and what would work. */
int cfg_check(const struct cuzk_config *c, cfg_warn_fn warn, void *warn_ctx,
              struct cuzk_error *err);
/* The bearer token in path: its first line without surrounding whitespace; 16 to 512
 * printable ASCII characters. */
#define CFG_TOKEN_MAX 513
int cfg_read_token(char out[CFG_TOKEN_MAX], const char *path, struct cuzk_error *err);
/* The longest duration a key accepts (100 years: milliseconds that still fit in nanoseconds
 * of a uint64_t, so no timer downstream can wrap). */
#define CFG_DURATION_MAX_MS (36500ull * 86400 * 1000)

/* Value parsers shared with the CLIs. Return false on a malformed value. */
bool cfg_parse_size(uint64_t *out, const char *s);       /* "64GiB", "512MB", "4096" */
bool cfg_parse_duration_ms(uint64_t *out, const char *s); /* "5m", "30s", "250ms", "1h", "300" */

#endif
