/* test_engine_status.c: what the engine's status snapshot adds for the status page: the key
 * load in progress (read from the loader's counters while it runs; also run under TSan), the
 * ring of recent proofs with their phases, and the failures with their reason. CPU backend. */
#include "test.h"

#if !defined(CUZK_CLIENT) || !CUZK_CLIENT
TEST(engine_status_needs_daemon_build) { test_skip("built with CUZK_CLIENT=0: no daemon engine"); }
#else
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/circuits.h"
#include "cuzk/engine.h"
#include "cuzk/groth16.h"
#include "cuzk/log.h"
#include "cuzk/util.h"
#include "engine_kit.h"

static struct engine *start(const char *param_cache, int validation)
{
    struct cuzk_error err_s, *err = &err_s;
    struct engine_config cfg;
    engine_config_defaults(&cfg);
    cfg.mem_auto = false;
    cfg.mem_budget = 1ull << 30;
    cfg.workers_per_device = 2;
    cfg.synthesis_workers = 2;
    cfg.srs_validation = validation;
    snprintf(cfg.param_cache, sizeof cfg.param_cache, "%s", param_cache);
    clog_set_level(CLOG_ERROR);
    struct engine *e = engine_new(&cfg, NULL, err);
    ASSERT_MSG(e, "engine_new: %s", err->msg);
    return e;
}

static void stop(struct engine *e)
{
    engine_shutdown(e, 5000);
    engine_free(e);
}

struct preload { struct engine *e; const char *id; int rc; atomic_bool done; };
static void *preload_run(void *arg)
{
    struct preload *p = arg;
    struct cuzk_error err;
    bool already;
    uint64_t ms;
    p->rc = engine_preload(p->e, p->id, &already, &ms, &err);
    atomic_store(&p->done, true);
    return NULL;
}

/* Snapshots taken while another thread loads a key from its file (full checks: the slow
 * path) see the entry as loading, first preparing (no phase), then reading with bytes that
 * never exceed the key's point bytes by the file's own layout; once loaded, it is gone. */
TEST_T(key_load_progress_in_snapshot, 120)
{
    char dir[] = "/tmp/cuzk-test-status-XXXXXX", path[200];
    ASSERT(mkdtemp(dir));
    write_params(dir, 4096, path, sizeof path);
    struct g16_params_info inf;
    struct cuzk_error err_s, *err = &err_s;
    ASSERT_OK(g16_params_info(&inf, path, err), err);
    const uint64_t body = (inf.n_h + inf.n_l + inf.n_a + inf.n_b_g1) * 96 + inf.n_b_g2 * 192;
    struct engine *e = start(dir, G16_VALIDATE_FULL);
    struct preload p = {e, "synthetic-4096", -1, false};
    pthread_t th;
    ASSERT(!pthread_create(&th, NULL, preload_run, &p));
    unsigned seen = 0, reading = 0;
    uint64_t last = 0;
    while (!atomic_load(&p.done)) {
        struct engine_snapshot s;
        ASSERT_OK(engine_snapshot(e, &s, err), err);
        for (size_t i = 0; i < s.n_loading; i++) {
            const struct engine_loading_snap *l = &s.loading[i];
            ASSERT_STR_EQ(l->circuit_id, "synthetic-4096");
            seen++;
            if (!l->phase) {
                ASSERT(l->bytes_done == 0 && l->bytes_total == 0);
                continue;
            }
            ASSERT_STR_EQ(l->phase, "reading and checking");
            ASSERT_EQ_U64(l->bytes_total, body);
            ASSERT(l->bytes_done <= body && l->bytes_done >= last);   /* one pass: never back */
            last = l->bytes_done;
            reading += l->bytes_done > 0;
        }
        engine_snapshot_free(&s);
        usleep(500);
    }
    pthread_join(th, NULL);
    ASSERT_EQ_INT(p.rc, CUZK_OK);
    ASSERT_MSG(seen > 0 && reading > 0, "the load was seen %u times, reading %u times", seen, reading);
    struct engine_snapshot s;
    ASSERT_OK(engine_snapshot(e, &s, err), err);
    ASSERT_EQ_U64(s.n_loading, 0);
    engine_snapshot_free(&s);
    stop(e);
    unlink(path);
    char v[220];
    snprintf(v, sizeof v, "%s.validated", path);
    unlink(v);
    rmdir(dir);
}

static int await_status(struct engine *e, const char *id)
{
    struct cuzk_error err_s, *err = &err_s;
    struct engine_result res;
    ASSERT_OK(engine_await(e, id, 120000, &res, err), err);
    int st = res.status;
    engine_result_free(&res);
    return st;
}

/* Finished jobs land in the recent ring newest first, each phase inside the job's total and in
 * the order a partition goes through them; the ring keeps the last ENGINE_RECENT; a failure
 * is kept with its reason. */
TEST_T(recent_proofs_and_errors, 120)
{
    char dir[] = "/tmp/cuzk-test-status-XXXXXX", path[200];
    ASSERT(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/synthetic-512.params", dir);
    FILE *f = fopen(path, "w");
    fputs("not a key", f);
    fclose(f);
    struct cuzk_error err_s, *err = &err_s;
    struct engine *e = start(dir, G16_VALIDATE_CURVE);
    char id[32];
    const int n = ENGINE_RECENT + 3;
    for (int i = 0; i < n; i++) {
        snprintf(id, sizeof id, "ok-%d", i);
        submit(e, id, 64, i % 3 + 1);
        ASSERT_EQ_INT(await_status(e, id), ENGINE_COMPLETED);
    }
    submit(e, "bad", 512, 1);
    ASSERT_EQ_INT(await_status(e, "bad"), ENGINE_FAILED);
    struct engine_snapshot s;
    ASSERT_OK(engine_snapshot(e, &s, err), err);
    ASSERT_EQ_U64(s.n_recent, ENGINE_RECENT);
    ASSERT_STR_EQ(s.recent[0].id, "bad");
    ASSERT_EQ_INT(s.recent[0].status, ENGINE_FAILED);
    ASSERT(!s.recent[0].gpu.ran && !s.recent[0].verify.ran);   /* it never reached a prover */
    for (size_t i = 1; i < s.n_recent; i++) {
        const struct engine_recent_snap *r = &s.recent[i];
        int k = n - (int)i;   /* newest first: ok-(n-1), ok-(n-2), ... */
        snprintf(id, sizeof id, "ok-%d", k);
        ASSERT_STR_EQ(r->id, id);
        ASSERT_EQ_INT(r->status, ENGINE_COMPLETED);
        ASSERT_EQ_INT(r->kind, ENGINE_KIND_SYNTHETIC);
        ASSERT_EQ_U64(r->n_parts, (uint64_t)(k % 3 + 1));
        ASSERT(r->synthesis.ran && r->gpu.ran && r->verify.ran);
        ASSERT(r->queue_ms <= r->synthesis.start_ms && r->synthesis.start_ms <= r->synthesis.end_ms);
        ASSERT(r->synthesis.start_ms <= r->gpu.start_ms && r->gpu.start_ms <= r->gpu.end_ms);
        ASSERT(r->gpu.start_ms <= r->verify.start_ms && r->gpu.end_ms <= r->verify.end_ms);
        ASSERT(r->verify.end_ms <= r->total_ms);
        ASSERT(r->finished_unix_ms <= s.recent[i - 1].finished_unix_ms);
    }
    ASSERT_EQ_U64(s.n_errors, 1);
    ASSERT_STR_EQ(s.errors[0].job_id, "bad");
    ASSERT_EQ_INT(s.errors[0].kind, ENGINE_KIND_SYNTHETIC);
    ASSERT_STR_CONTAINS(s.errors[0].message, "partition 0 SRS load failed: ");
    ASSERT_STR_CONTAINS(s.errors[0].message, "synthetic-512.params");
    ASSERT_EQ_U64((uint64_t)s.errors[0].unix_ms, (uint64_t)s.recent[0].finished_unix_ms);
    engine_snapshot_free(&s);
    stop(e);
    unlink(path);
    rmdir(dir);
}
#endif
