/* main.c: cuzk-daemon: configuration (cfg.c) mapped onto the engine's config and prover
 * backend, instance lock, engine + gRPC + HTTP start, readiness, and the SIGTERM/SIGINT drain.
 * Usage: cuzk-daemon [-c FILE] [-l ADDR] [--log-level L]. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfg.h"
#include "cuzk/engine.h"
#include "cuzk/log.h"
#include "cuzk/server.h"
#include "cuzk/util.h"
#include "durable.h"
#include "lifecycle.h"

#ifndef CUZK_BUILD_ID
#define CUZK_BUILD_ID "unknown"
#endif
#define CUZK_VERSION "0.1.0"
#define DEFAULT_CONFIG "/data/zk/cuzk.toml"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cuzk-daemon [-c FILE] [-l ADDR] [--log-level LEVEL]\n"
            "  -c, --config FILE       TOML configuration (default " DEFAULT_CONFIG "; if that\n"
            "                          file is missing, the built-in defaults are used)\n"
            "  -l, --listen ADDR       gRPC address, overrides [daemon] listen: unix:///path or host:port\n"
            "      --log-level LEVEL   error|warn|info|debug|trace, overrides [logging] level\n"
            "      --check-config      validate the configuration and exit\n"
            "      --print-default-config  print the built-in configuration and exit\n"
            "      --version           print version and build id\n");
}

static void warn_cb(void *ctx, const char *msg)
{
    (void)ctx;
    cuzk_log(CLOG_WARN, "config: %s", msg);
}

/* Preload [srs] preload entries after readiness so a long load does not delay it. */
struct preload_ctx { struct engine *e; struct cuzk_config cfg; volatile int done; };
static void *preload_main(void *arg)
{
    struct preload_ctx *p = arg;
    for (unsigned i = 0; i < p->cfg.n_preload; i++) {
        bool already;
        uint64_t ms;
        struct cuzk_error err;
        cuzk_error_clear(&err);
        if (engine_preload(p->e, p->cfg.preload[i], &already, &ms, &err))
            cuzk_log(CLOG_WARN, "SRS preload failed: circuit=%s: %s", p->cfg.preload[i], err.msg);
        else
            cuzk_log(CLOG_INFO, "SRS preloaded: circuit=%s load_ms=%" PRIu64, p->cfg.preload[i], ms);
    }
    __atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* What the engine needs of the configuration file. */
static void engine_config_of(struct engine_config *ec, const struct cuzk_config *c)
{
    engine_config_defaults(ec);
    ec->workers_per_device = c->gpu_workers_per_device;
    ec->synthesis_workers = c->max_parallel_synthesis;
    ec->mem_auto = c->budget_auto;
    ec->mem_budget = c->total_budget;
    ec->mem_safety_margin = c->safety_margin;
    ec->srs_min_idle_ms = c->eviction_min_idle_ms;
    ec->result_retention_ms = c->result_retention_ms;
    ec->result_retention_count = c->result_retention_count;
    ec->max_queued_jobs = c->max_queued_jobs;
    snprintf(ec->param_cache, sizeof ec->param_cache, "%s", c->param_cache);
    /* the reader accepted only these three */
    ec->srs_validation = !strcmp(c->srs_validation, "none") ? G16_VALIDATE_NONE
                       : !strcmp(c->srs_validation, "curve") ? G16_VALIDATE_CURVE
                       : G16_VALIDATE_FULL;
}

/* The [gpus] section: which devices, and the operator's per-device options. */
static void gpu_config_of(struct engine_gpu_config *gc, const struct cuzk_config *c)
{
    memset(gc, 0, sizeof *gc);
    gc->devices = c->devices;
    gc->n_devices = c->n_devices;
    gc->workers_per_device = c->gpu_workers_per_device;
    gc->options.reserve_bytes = (size_t)c->gpu_vram_reserve_mib << 20;
    gc->options.stream_key = c->gpu_stream_key;
    gc->options.trace = c->gpu_trace;
    gc->options.mem_limit_bytes = (size_t)c->gpu_memory_limit;
}

/* How long a GPU's NVML figures are reused: scrapes and page refreshes within it ask the
 * driver nothing (a PCIe throughput query alone waits 20 ms). */
#define NVML_MAX_AGE_MS 1000

static void telemetry_sample(void *ctx, int ordinal, struct nvml_sample *out)
{
    nvml_sample(ctx, ordinal < 0 ? ~0u : (unsigned)ordinal, out);
}

/* [gpus] nvml_library: load it and log one line either way. NULL when off or absent. */
static struct nvml *telemetry_open(const struct cuzk_config *c, const struct engine_backend *b)
{
    if (!strcmp(c->nvml_library, "off")) {
        cuzk_log(CLOG_INFO, "GPU telemetry off ([gpus] nvml_library = \"off\")");
        return NULL;
    }
    struct nvml *n = NULL;
    struct cuzk_error err;
    if (nvml_open(&n, c->nvml_library, NVML_MAX_AGE_MS, &err)) {
        cuzk_log(CLOG_INFO, "GPU telemetry off: %s", err.msg);
        return NULL;
    }
    cuzk_log(CLOG_INFO, "GPU telemetry: NVML from %s, driver %s, %u GPU(s) visible, %u in use",
             c->nvml_library, nvml_driver_version(n)[0] ? nvml_driver_version(n) : "unknown",
             nvml_count(n), b->n_devices);
    return n;
}

/* After the first signal a second one ends the process at once. */
static void *second_signal_main(void *arg)
{
    sigset_t *set = arg;
    int sig = 0;
    if (sigwait(set, &sig) == 0) {
        fprintf(stderr, "cuzk-daemon: second signal (%s); exiting immediately\n", strsignal(sig));
        _exit(128 + sig);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *config_path = NULL, *listen = NULL, *log_level = NULL;
    bool check_only = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && has_next) config_path = argv[++i];
        else if (!strncmp(a, "--config=", 9)) config_path = a + 9;
        else if ((!strcmp(a, "-l") || !strcmp(a, "--listen")) && has_next) listen = argv[++i];
        else if (!strncmp(a, "--listen=", 9)) listen = a + 9;
        else if (!strcmp(a, "--log-level") && has_next) log_level = argv[++i];
        else if (!strncmp(a, "--log-level=", 12)) log_level = a + 12;
        else if (!strcmp(a, "--check-config")) check_only = true;
        else if (!strcmp(a, "--print-default-config")) { fputs(cfg_default_toml, stdout); return 0; }
        else if (!strcmp(a, "--version")) { printf("cuzk-daemon %s (build %s)\n", CUZK_VERSION, CUZK_BUILD_ID); return 0; }
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else { fprintf(stderr, "cuzk-daemon: unknown or incomplete option '%s'\n", a); usage(stderr); return 2; }
    }
    if (log_level) {
        int lv;
        if (!clog_level_parse(&lv, log_level)) {
            fprintf(stderr, "cuzk-daemon: --log-level %s: expected error, warn, info, debug or trace\n", log_level);
            return 2;
        }
        clog_set_level(lv);
    }

    /* ---- configuration: built-in defaults, then the file ---- */
    struct cuzk_config cfg;
    struct cuzk_error err;
    cuzk_error_clear(&err);
    cfg_defaults(&cfg);
    const char *cfg_source = config_path;
    char digest[65];
    if (cfg_parse(&cfg, cfg_default_toml, strlen(cfg_default_toml), "<built-in>", NULL, NULL, &err)) {
        fprintf(stderr, "cuzk-daemon: built-in configuration: %s\n", err.msg);
        return 1;
    }
    if (!config_path && access(DEFAULT_CONFIG, F_OK) == 0) cfg_source = DEFAULT_CONFIG;
    if (cfg_source) {
        FILE *f = fopen(cfg_source, "rb");
        if (!f) {
            fprintf(stderr, "cuzk-daemon: cannot read config %s: %s\n", cfg_source, strerror(errno));
            return 1;
        }
        char *buf = NULL;
        size_t len = 0, cap = 0;
        for (;;) {
            if (len + 4096 > cap) {
                char *nb = realloc(buf, cap = cap ? cap * 2 : 8192);
                if (!nb) { free(buf); fclose(f); fprintf(stderr, "cuzk-daemon: out of memory\n"); return 1; }
                buf = nb;
            }
            size_t got = fread(buf + len, 1, cap - len, f);
            if (!got) break;
            len += got;
        }
        fclose(f);
        lc_sha256_hex(digest, buf, len);
        int rc = cfg_parse(&cfg, buf ? buf : "", len, cfg_source, warn_cb, NULL, &err);
        free(buf);
        if (rc) {
            fprintf(stderr, "cuzk-daemon: invalid configuration: %s\n", err.msg);
            return 1;
        }
    } else {
        lc_sha256_hex(digest, cfg_default_toml, strlen(cfg_default_toml));
    }
    if (listen) {
        if (strlen(listen) >= sizeof cfg.listen) { fprintf(stderr, "cuzk-daemon: --listen too long\n"); return 2; }
        snprintf(cfg.listen, sizeof cfg.listen, "%s", listen);
    }
    if (!log_level) {
        int lv = CLOG_INFO;
        clog_level_parse(&lv, cfg.log_level);
        clog_set_level(lv);
    }
    clog_set_json(cfg.log_json);
    /* what cannot work on this machine is refused here, by --check-config and by a start alike */
    if (cfg_check(&cfg, warn_cb, NULL, &err)) {
        const char *what = check_only ? "invalid configuration" : "refusing to start";
        fprintf(stderr, "cuzk-daemon: %s: %s\n", what, err.msg);
        cuzk_log(CLOG_ERROR, "%s: %s", what, err.msg);
        return 1;
    }
    if (check_only) {
        printf("configuration OK: %s (sha256 %s)\n", cfg_source ? cfg_source : "<built-in defaults>", digest);
        return 0;
    }
    /* the shared compute pool: [synthesis] threads, else CUZK_THREADS, else one per CPU */
    {
        char t[16];
        snprintf(t, sizeof t, "%u", cfg.synthesis_threads);
        struct cuzk_error terr;
        if (pool_default_set_threads(cfg.synthesis_threads ? t : getenv("CUZK_THREADS"), &terr)) {
            fprintf(stderr, "cuzk-daemon: CUZK_THREADS: %s\n", terr.msg);
            return 1;
        }
    }

    cuzk_log(CLOG_INFO, "cuzk-daemon starting: version=%s build=%s pid=%ld config=%s config_sha256=%s",
             CUZK_VERSION, CUZK_BUILD_ID, (long)getpid(),
             cfg_source ? cfg_source : "<built-in defaults>", digest);
    cuzk_log(CLOG_INFO, "configuration loaded: listen=%s status_listen=%s param_cache=%s "
             "srs_validation=%s gpu_workers_per_device=%u max_message_size=%" PRIu64, cfg.listen,
             cfg.status_listen[0] ? cfg.status_listen : "(off)", cfg.param_cache,
             cfg.srs_validation, cfg.gpu_workers_per_device, cfg.max_message_size);

    /* Signals are taken by sigwait in this thread only: block them before any thread exists. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* ---- instance lock, then the listen address ---- */
    int lock_fd = -1;
    char lock_path[1100];
    if (lc_lock(&lock_fd, lock_path, sizeof lock_path, cfg.listen, &err)) {
        fprintf(stderr, "cuzk-daemon: %s\n", err.msg);
        cuzk_log(CLOG_ERROR, "%s", err.msg);
        return 1;
    }
    if (lc_prepare_listen(cfg.listen, &err)) {
        fprintf(stderr, "cuzk-daemon: %s\n", err.msg);
        cuzk_log(CLOG_ERROR, "%s", err.msg);
        return 1;
    }

    /* ---- the job journal: accepted jobs survive a crash (docs/daemon.md) ---- */
    char state_dir[sizeof lock_path + 16];
    /* state_dir = "": systemd's StateDirectory= (STATE_DIRECTORY, the first of its paths)
     * when the unit has one, so a packaged daemon keeps its journal in /var/lib/cuzk */
    char sd_env[CFG_STR_MAX] = "";
    const char *sd = getenv("STATE_DIRECTORY");
    if (!cfg.state_dir[0] && sd && sd[0] && sd[0] != ':')
        snprintf(sd_env, sizeof sd_env, "%.*s", (int)strcspn(sd, ":"), sd);
    durable_state_dir(state_dir, sizeof state_dir, sd_env[0] ? sd_env : cfg.state_dir, lock_path);
    struct durable *dur = NULL;
    if (!state_dir[0]) {
        cuzk_log(CLOG_WARN, "[daemon] state_dir = \"off\": accepted jobs live in memory only; a "
                 "crash or restart loses them");
    } else if (durable_open(&dur, state_dir, cfg.result_retention_ms, cfg.result_retention_count,
                            &err)) {
        fprintf(stderr, "cuzk-daemon: refusing to start: [daemon] state_dir: %s\n", err.msg);
        cuzk_log(CLOG_ERROR, "refusing to start: [daemon] state_dir: %s", err.msg);
        lc_unlock(lock_fd, lock_path);
        return 1;
    }

    struct engine_gpu_config gcfg;
    struct engine_backend backend;
    gpu_config_of(&gcfg, &cfg);
    if (engine_backend_gpu(&backend, &gcfg, &err)) {
        fprintf(stderr, "cuzk-daemon: refusing to start: %s\n", err.msg);
        cuzk_log(CLOG_ERROR, "refusing to start: %s", err.msg);
        durable_close(dur);
        lc_unlock(lock_fd, lock_path);
        return 1;
    }
    struct engine_config ecfg;
    engine_config_of(&ecfg, &cfg);
    durable_hooks(dur, &ecfg.hooks);
    struct nvml *nvml = telemetry_open(&cfg, &backend);
    if (nvml && backend.n_devices) {
        ecfg.telemetry.ctx = nvml;
        ecfg.telemetry.sample = telemetry_sample;
    }
    struct engine *e = engine_new(&ecfg, &backend, &err);
    if (!e) {
        cuzk_log(CLOG_ERROR, "cannot start the engine: %s", err.msg);
        durable_close(dur);
        return 1;
    }
    /* before the listeners: a resubmitted id then joins its replayed job */
    durable_replay(dur, e);
    /* the bearer token (cfg_check read it once already; read again: it may have changed) */
    char token[CFG_TOKEN_MAX] = "";
    if (cfg.auth_token_file[0] && cfg_read_token(token, cfg.auth_token_file, &err)) {
        fprintf(stderr, "cuzk-daemon: refusing to start: %s\n", err.msg);
        cuzk_log(CLOG_ERROR, "refusing to start: %s", err.msg);
        engine_shutdown(e, 0);
        engine_free(e);
        durable_close(dur);
        return 1;
    }
    struct http_server *http = NULL;
    if (cfg.status_listen[0]) {
        if (http_server_start(&http, e, cfg.status_listen, token, &err)) {
            fprintf(stderr, "cuzk-daemon: %s\n", err.msg);
            cuzk_log(CLOG_ERROR, "%s", err.msg);
            engine_shutdown(e, 0);
            engine_free(e);
            durable_close(dur);
            return 1;
        }
        cuzk_log(CLOG_INFO, "status HTTP server listening on http://%s (status page /, /status, /metrics)",
                 cfg.status_listen);
    }
    struct rpc_server *rpc = NULL;
    struct rpc_options ro = {
        .max_message = cfg.max_message_size,
        .tls_cert = cfg.tls_cert, .tls_key = cfg.tls_key, .tls_client_ca = cfg.tls_client_ca,
        .auth_token = token, .max_waiters = cfg.max_waiters, .max_waiters_key = "max_waiters",
        .max_large_requests = cfg.max_large_requests,
    };
    /* The socket gets [daemon] socket_mode from its creation on (the umask would decide
     * otherwise: 0777 under umask 000), then chmod makes it exact. */
    bool unix_sock = !strncmp(cfg.listen, "unix://", 7);
    mode_t old_mask = 0;
    if (unix_sock) old_mask = umask((mode_t)(0777 & ~cfg.socket_mode));
    int rrc = rpc_server_start(&rpc, e, cfg.listen, &ro, &err);
    if (unix_sock) umask(old_mask);
    if (!rrc && unix_sock && chmod(cfg.listen + 7, (mode_t)cfg.socket_mode) != 0) {
        rrc = cuzk_fail(&err, CUZK_E_IO, "[daemon] socket_mode: cannot chmod %s to %04o: %s",
                        cfg.listen + 7, cfg.socket_mode, strerror(errno));
        rpc_server_free(rpc, 0);
        rpc = NULL;
    }
    memset(token, 0, sizeof token);
    if (rrc) {
        fprintf(stderr, "cuzk-daemon: %s\n", err.msg);
        cuzk_log(CLOG_ERROR, "%s", err.msg);
        http_server_stop(http);
        engine_shutdown(e, 0);
        engine_free(e);
        durable_close(dur);
        return 1;
    }
    if (unix_sock)
        cuzk_log(CLOG_INFO, "listening on %s (socket_mode=%04o, token=%s)", cfg.listen,
                 cfg.socket_mode, cfg.auth_token_file[0] ? "required" : "off");
    else
        cuzk_log(CLOG_INFO, "listening on %s (tls=%s, token=%s)", cfg.listen,
                 !cfg.tls_cert[0] ? "off" : cfg.tls_client_ca[0] ? "mutual" : "on",
                 cfg.auth_token_file[0] ? "required" : "off");

    /* ---- ready ---- */
    printf("cuzk-daemon ready, serving on %s\n", cfg.listen);
    fflush(stdout);
    cuzk_log(CLOG_INFO, "cuzk-daemon ready, serving on %s", cfg.listen);
    lc_notify("READY=1");

    static struct preload_ctx pctx;
    pctx.e = e;
    pctx.cfg = cfg;
    pctx.done = 1;
    pthread_t preload_thread;
    if (cfg.n_preload) {
        pctx.done = 0;
        if (pthread_create(&preload_thread, NULL, preload_main, &pctx) == 0) pthread_detach(preload_thread);
        else pctx.done = 1;
    }

    int sig = 0;
    while (sigwait(&set, &sig) != 0) {}
    cuzk_log(CLOG_INFO, "received %s, shutting down (a second signal exits at once)",
             sig == SIGTERM ? "SIGTERM" : "SIGINT");
    pthread_t second;
    pthread_create(&second, NULL, second_signal_main, &set);
    lc_notify("STOPPING=1");

    /* Drain: stop accepting; jobs whose partitions are all on a prover may finish within the
     * grace, the other unfinished jobs stay in the journal for the next start (cancelled
     * without one); answer every waiter, then close the listeners. */
    rpc_server_stop_accepting(rpc);
    engine_shutdown(e, cfg.shutdown_grace_ms);
    rpc_server_free(rpc, 5000);
    http_server_stop(http);
    lc_remove_socket(cfg.listen);
    /* A preload still reading a large file keeps the engine alive until exit. */
    if (__atomic_load_n(&pctx.done, __ATOMIC_ACQUIRE)) {
        engine_free(e);
        durable_close(dur);   /* no hook can run any more; else the process exit closes it */
        nvml_close(nvml);
    }
    cuzk_log(CLOG_INFO, "cuzk-daemon stopped");
    lc_unlock(lock_fd, lock_path);
    return 0;
}
