/* test_durable.c: the job journal through real daemons (issue 28 §1): kill -9 during a batch
 * of 20 SYNTHETIC jobs and a restart on the same state_dir (every job completes exactly once
 * with a proof this test verifies with its own key, without the client resubmitting; ids from
 * before the crash answer their proofs); the same with the journal's last record torn at a
 * random byte; a SIGTERM drain then a restart (nothing replayed twice, only partitions on a
 * prover counted as running); a resubmitted id joining its replayed job; disk full (a tiny
 * tmpfs: RESOURCE_EXHAUSTED naming the path, nothing accepted lost); one daemon per state_dir;
 * a 2 KiB PoRep job across kill -9 (shared parameter fixture); after kill -9 the write-ahead log
 * deleted (nothing acknowledged lost) or journal.db and its WAL deleted (every id named in the
 * log with exact counts, AwaitProof answering NOT_FOUND saying the journal lost it). "Exactly once" is read from
 * the daemons' logs: a job's result is journaled before its "proof completed" line is written,
 * so across the two runs each id must have exactly one such line. */
#include "test.h"
#include "wal_frames.h"

#ifndef CUZK_CLIENT
#define CUZK_CLIENT 0
#endif

#if !CUZK_CLIENT
TEST(durable_e2e_needs_grpc) { test_skip("built with CUZK_CLIENT=0 (no gRPC): no daemon to test"); }
#else
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "cuzk/circuits.h"
#include "cuzk/groth16.h"
#include "cuzk/v1/proving.pb-c.h"
#include "daemon_harness.h"
#include "synth_kit.h"
#include "filecoin/porep_fixture.h"

#define N_JOBS 20
#define N_CONS 2048     /* constraints: slow enough that a kill lands mid-batch on 2 cores */
#define N_PARTS 3

static const char *cfg_text =
    "[daemon]\n"
    "listen = \"unix://%DIR%/cuzk.sock\"\n"
    "shutdown_grace = \"20s\"\n"
    "[memory]\n"
    "total_budget = \"2GiB\"\n"
    "[gpus]\n"
    "gpu_workers_per_device = 1\n"
    "[pipeline]\n"
    "max_parallel_synthesis = 2\n"
    "[srs]\n"
    "param_cache = \"%DIR%\"\n";

/* ---- RPC helpers ---- */
static int submit(struct cz_client *c, const char *rid, uint64_t n, uint32_t parts, uint64_t seed,
                  char *det)
{
    uint8_t s8[8];
    seed_bytes(s8, seed);
    Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    q.request_id = (char *)rid;
    q.proof_kind = CUZK__V1__PROOF_KIND__SYNTHETIC;
    q.synthetic_constraints = n;
    q.synthetic_partitions = parts;
    q.vanilla_proof.data = s8;
    q.vanilla_proof.len = 8;
    ProtobufCMessage *m = NULL;
    int st = cz_call(c, CZ_METHOD("SubmitProof"), &q.base, &cuzk__v1__submit_proof_response__descriptor,
                     &m, 30000, det, 512);
    if (m) protobuf_c_message_free_unpacked(m, NULL);
    return st;
}

static int await_job(struct cz_client *c, const char *job, uint64_t timeout_ms,
                     Cuzk__V1__AwaitProofResponse **out, char *det)
{
    Cuzk__V1__AwaitProofRequest q = CUZK__V1__AWAIT_PROOF_REQUEST__INIT;
    q.job_id = (char *)job;
    q.timeout_ms = timeout_ms;
    ProtobufCMessage *m = NULL;
    *out = NULL;
    int st = cz_call(c, CZ_METHOD("AwaitProof"), &q.base, &cuzk__v1__await_proof_response__descriptor,
                     &m, 300000, det, 512);
    *out = (Cuzk__V1__AwaitProofResponse *)m;
    return st;
}

/* How many times the log says job id completed ("proof completed: job=\"<id>\" "). */
static int completions(const char *log, const char *id)
{
    char pat[160];
    snprintf(pat, sizeof pat, "proof completed: job=\"%s\" ", id);
    int n = 0;
    for (const char *p = log; (p = strstr(p, pat)); p += strlen(pat)) n++;
    return n;
}
static bool requeued(const char *log, const char *id)
{
    char pat[160];
    snprintf(pat, sizeof pat, "journal: job=\"%s\" kind=", id);
    const char *p = strstr(log, pat);
    return p && strstr(p, " re-queued (") && strstr(p, " re-queued (") < strchr(p, '\n');
}

static void job_id(char out[16], int i) { snprintf(out, 16, "j%02d", i); }
static uint64_t job_seed(int i) { return 1000 * (uint64_t)(i + 1); }

/* Every id answers COMPLETED with N_PARTS partition proofs that verify under our key. */
static void await_all_verified(struct cz_client *c, const struct vkit *k, int n,
                               uint8_t (*proofs)[N_PARTS * 192])
{
    char det[512];
    for (int i = 0; i < n; i++) {
        char id[16];
        job_id(id, i);
        Cuzk__V1__AwaitProofResponse *a = NULL;
        int st = await_job(c, id, 0, &a, det);
        ASSERT_MSG(st == 0, "AwaitProof %s after the restart: %s %s", id, cz_status_name(st), det);
        ASSERT_MSG(a->status == 1, "%s: status %d: %s", id, a->status, a->error_message);
        ASSERT_EQ_U64(a->proof.len, N_PARTS * 192);
        for (int p = 0; p < N_PARTS; p++) vkit_verify(k, job_seed(i) + (uint64_t)p, a->proof.data + 192 * p);
        if (proofs) memcpy(proofs[i], a->proof.data, N_PARTS * 192);
        protobuf_c_message_free_unpacked(&a->base, NULL);
    }
}

/* Submit the batch, wait until `done` of them completed, kill -9. Returns run 1's log. */
static char *batch_then_kill(struct daemon *d, int done, uint8_t (*early)[N_PARTS * 192])
{
    h_start_or_fail(d, cfg_text, 60);
    struct cz_client *c = connect_to(d->addr);
    char det[512];
    for (int i = 0; i < N_JOBS; i++) {
        char id[16];
        job_id(id, i);
        int st = submit(c, id, N_CONS, N_PARTS, job_seed(i), det);
        ASSERT_MSG(st == 0, "SubmitProof %s: %s %s", id, cz_status_name(st), det);
    }
    for (int i = 0; i < done; i++) {
        char id[16];
        job_id(id, i);
        Cuzk__V1__AwaitProofResponse *a = NULL;
        ASSERT_EQ_INT(await_job(c, id, 0, &a, det), 0);
        ASSERT_MSG(a->status == 1, "%s: %s", id, a->error_message);
        memcpy(early[i], a->proof.data, N_PARTS * 192);
        protobuf_c_message_free_unpacked(&a->base, NULL);
    }
    h_kill9_or_fail(d);
    cz_close(c);
    char *log = h_slurp(d->err_path);
    int total = 0;
    for (int i = 0; i < N_JOBS; i++) {
        char id[16];
        job_id(id, i);
        total += completions(log, id);
    }
    ASSERT_MSG(total < N_JOBS, "all %d jobs completed before the kill: nothing left to replay "
               "(make the jobs larger)", N_JOBS);
    printf("killed with %d of %d jobs completed\n", total, N_JOBS);
    /* run 2's log goes elsewhere */
    h_keep_log(d, "run1.err");
    return log;
}

/* After the restart: every job verified; ids completed before the crash answer the very same
 * proof (restored, not proved again); each id completed exactly `once` across both runs
 * (extra: ids allowed a second completion, the torn-tail case). */
static void check_after_restart(struct daemon *d, const struct vkit *k, const char *log1,
                                int done, uint8_t (*early)[N_PARTS * 192], int max_twice)
{
    struct cz_client *c = connect_to(d->addr);
    static uint8_t proofs[N_JOBS][N_PARTS * 192];
    await_all_verified(c, k, N_JOBS, proofs);
    for (int i = 0; i < done; i++) ASSERT_MEM_EQ(proofs[i], early[i], N_PARTS * 192);
    cz_close(c);
    char *log2 = h_slurp(d->err_path);
    ASSERT_STR_CONTAINS(log2, "journal: replayed ");
    int twice = 0;
    for (int i = 0; i < N_JOBS; i++) {
        char id[16];
        job_id(id, i);
        int c1 = completions(log1, id), c2 = completions(log2, id);
        ASSERT_MSG(c1 <= 1 && c2 <= 1, "%s completed %d time(s) before and %d after the restart",
                   id, c1, c2);
        if (c1 + c2 == 2) twice++;
        ASSERT_MSG(c1 + c2 >= 1, "%s never completed", id);
        /* re-queued exactly when it had not completed (or its result was in a torn tail) */
        ASSERT_MSG(requeued(log2, id) == (c2 == 1), "%s: completed %d+%d, re-queued %d", id, c1,
                   c2, requeued(log2, id));
    }
    ASSERT_MSG(twice <= max_twice, "%d job(s) proved twice (at most %d allowed)", twice, max_twice);
    free(log2);
}

/* ------------------------------------------------------------------ tests -- */

TEST_T(kill9_during_batch_every_job_completes_once, 600)
{
    struct daemon d;
    h_new(&d);
    struct vkit k;
    vkit_make(&k, d.dir, N_CONS);
    static uint8_t early[3][N_PARTS * 192];
    char *log1 = batch_then_kill(&d, 3, early);
    h_start_or_fail(&d, cfg_text, 60);   /* same state_dir: beside the same socket */
    /* a client that does resubmit an unfinished id joins the replayed job */
    struct cz_client *c = connect_to(d.addr);
    char det[512], last[16];
    job_id(last, N_JOBS - 1);
    ASSERT_EQ_INT(submit(c, last, N_CONS, N_PARTS, job_seed(N_JOBS - 1), det), 0);
    cz_close(c);
    check_after_restart(&d, &k, log1, 3, early, 0);
    char *log2 = h_slurp(d.err_path);
    if (completions(log1, last) == 0) {
        char pat[100];
        snprintf(pat, sizeof pat, "request_id=\"%s\" matches an existing job (in progress)", last);
        ASSERT_STR_CONTAINS(log2, pat);
    }
    free(log2);
    free(log1);
    h_stop_or_fail(&d, 30);
    h_cleanup(&d);
}

TEST_T(kill9_then_torn_journal_tail, 600)
{
    struct daemon d;
    h_new(&d);
    struct vkit k;
    vkit_make(&k, d.dir, N_CONS);
    static uint8_t early[3][N_PARTS * 192];
    char *log1 = batch_then_kill(&d, 3, early);
    /* tear the journal's last record: cut its write-ahead log at a random byte of the last
     * frame of its current generation (the last transaction: the result of the last job that
     * completed; frames of the generation before, already in journal.db, may follow it) */
    char wal[400];
    snprintf(wal, sizeof wal, "%s/cuzk.sock.state/journal.db-wal", d.dir);
    off_t end = wal_current_end(wal);
    ASSERT_MSG(end >= 32 + 4120, "no result in the write-ahead log at %s", wal);
    off_t at = end - 1 - (off_t)(cuzk_rng_u64(test_rng()) % 4120);
    ASSERT(truncate(wal, at) == 0);
    printf("write-ahead log cut at byte %lld (its current frames end at %lld)\n", (long long)at,
           (long long)end);
    h_start_or_fail(&d, cfg_text, 60);
    char *log2 = h_slurp(d.err_path);
    ASSERT_STR_CONTAINS(log2, "ends in a torn or unfinished transaction");
    free(log2);
    /* the torn result is the only thing lost: that job is proved again, once */
    check_after_restart(&d, &k, log1, 0, early, 1);
    /* the jobs awaited before the crash whose results survived answer the same proof */
    free(log1);
    h_stop_or_fail(&d, 30);
    h_cleanup(&d);
}

/* kill -9, then the write-ahead log deleted (issue 49: it was the only copy of every record):
 * every request was checkpointed into journal.db before it was acknowledged, so none is lost;
 * results that were in the WAL only are named and proved again, each at most once more. */
TEST_T(kill9_then_wal_deleted_nothing_lost, 600)
{
    struct daemon d;
    h_new(&d);
    struct vkit k;
    vkit_make(&k, d.dir, N_CONS);
    static uint8_t early[3][N_PARTS * 192];
    char *log1 = batch_then_kill(&d, 3, early);
    char wal[400];
    snprintf(wal, sizeof wal, "%s/cuzk.sock.state/journal.db-wal", d.dir);
    ASSERT(unlink(wal) == 0);
    h_start_or_fail(&d, cfg_text, 60);
    char *log2 = h_slurp(d.err_path);
    ASSERT_MSG(!strstr(log2, "LOST"), "a job reported lost:\n%s", log2);
    ASSERT_STR_CONTAINS(log2, "0 lost (NOT_FOUND");
    free(log2);
    check_after_restart(&d, &k, log1, 0, early, 3);
    free(log1);
    h_stop_or_fail(&d, 30);
    h_cleanup(&d);
}

/* kill -9, then journal.db and its WAL are gone (a lost disk copy): the restart names every
 * acknowledged job as lost, with the exact counts, and AwaitProof for one answers NOT_FOUND
 * saying the journal lost it; resubmitted under the same id it completes. */
TEST_T(kill9_then_database_lost_ids_answer_not_found, 300)
{
    struct daemon d;
    h_new(&d);
    struct vkit k;
    vkit_make(&k, d.dir, N_CONS);
    static uint8_t early[2][N_PARTS * 192];
    char *log1 = batch_then_kill(&d, 2, early);
    int finished = 0;
    for (int i = 0; i < N_JOBS; i++) {
        char id[16];
        job_id(id, i);
        finished += completions(log1, id);   /* journaled before its line is written */
    }
    char p[400];
    snprintf(p, sizeof p, "%s/cuzk.sock.state/journal.db", d.dir);
    ASSERT(unlink(p) == 0);
    snprintf(p, sizeof p, "%s/cuzk.sock.state/journal.db-wal", d.dir);
    unlink(p);
    h_start_or_fail(&d, cfg_text, 60);
    char *log2 = h_slurp(d.err_path);
    char want[160];
    snprintf(want, sizeof want, "%d of %d acknowledged job(s) LOST (%d unfinished, %d with a "
             "finished result)", N_JOBS, N_JOBS, N_JOBS - finished, finished);
    ASSERT_STR_CONTAINS(log2, want);
    for (int i = 0; i < N_JOBS; i++) {
        char id[16], quoted[20];
        job_id(id, i);
        snprintf(quoted, sizeof quoted, "'%s'", id);
        ASSERT_STR_CONTAINS(log2, quoted);
    }
    free(log2);
    struct cz_client *c = connect_to(d.addr);
    char det[512], id[16];
    for (int i = 0; i < 2; i++) {   /* one finished before the kill, one never */
        job_id(id, i == 0 ? 0 : N_JOBS - 1);
        Cuzk__V1__AwaitProofResponse *a = NULL;
        int st = await_job(c, id, 1000, &a, det);
        ASSERT_MSG(st == 5, "AwaitProof %s: %s %s (expected NOT_FOUND)", id, cz_status_name(st), det);
        ASSERT_STR_CONTAINS(det, "journal lost it");
        if (a) protobuf_c_message_free_unpacked(&a->base, NULL);
    }
    /* the client does what the answer says: the same id, submitted again, completes */
    ASSERT_EQ_INT(submit(c, id, N_CONS, N_PARTS, job_seed(N_JOBS - 1), det), 0);
    Cuzk__V1__AwaitProofResponse *a = NULL;
    ASSERT_EQ_INT(await_job(c, id, 0, &a, det), 0);
    ASSERT_MSG(a->status == 1, "%s: %s", id, a->error_message);
    for (int part = 0; part < N_PARTS; part++)
        vkit_verify(&k, job_seed(N_JOBS - 1) + (uint64_t)part, a->proof.data + 192 * part);
    protobuf_c_message_free_unpacked(&a->base, NULL);
    cz_close(c);
    free(log1);
    h_stop_or_fail(&d, 30);
    h_cleanup(&d);
}

struct waiter { const char *addr; const char *id; int rpc; char det[512]; };
static void *waiter_main(void *arg)
{
    struct waiter *w = arg;
    struct cz_client *c = connect_to(w->addr);
    Cuzk__V1__AwaitProofResponse *a = NULL;
    w->rpc = await_job(c, w->id, 0, &a, w->det);
    if (a) protobuf_c_message_free_unpacked(&a->base, NULL);
    cz_close(c);
    return NULL;
}

TEST_T(sigterm_drain_then_restart_nothing_twice, 600)
{
    struct daemon d;
    h_new(&d);
    struct vkit k;
    vkit_make(&k, d.dir, N_CONS);
    h_start_or_fail(&d, cfg_text, 60);
    struct cz_client *c = connect_to(d.addr);
    char det[512];
    for (int i = 0; i < N_JOBS; i++) {
        char id[16];
        job_id(id, i);
        ASSERT_EQ_INT(submit(c, id, N_CONS, N_PARTS, job_seed(i), det), 0);
    }
    Cuzk__V1__AwaitProofResponse *a = NULL;
    ASSERT_EQ_INT(await_job(c, "j01", 0, &a, det), 0);
    ASSERT_EQ_INT(a->status, 1);
    protobuf_c_message_free_unpacked(&a->base, NULL);
    cz_close(c);
    /* a waiter on the last job, which cannot be finished by then */
    char last[16];
    job_id(last, N_JOBS - 1);
    struct waiter w = {d.addr, last, -1, ""};
    pthread_t wt;
    pthread_create(&wt, NULL, waiter_main, &w);
    usleep(200000);
    uint64_t t0 = cuzk_now_ns();
    h_stop_or_fail(&d, 30);
    double stop_s = (double)(cuzk_now_ns() - t0) / 1e9;
    pthread_join(wt, NULL);
    /* the waiter is answered: not finished, kept for the next start (gRPC UNAVAILABLE) */
    ASSERT_MSG(w.rpc == 14, "waiter got %s: %s", cz_status_name(w.rpc), w.det);
    ASSERT_STR_CONTAINS(w.det, "kept in the journal");
    char *log1 = h_slurp(d.err_path);
    ASSERT_STR_CONTAINS(log1, "unfinished job(s) kept in the journal for the next start");
    ASSERT_STR_CONTAINS(log1, "partition(s) on a prover");
    /* synthesized partitions waiting for the prover are not "running": the drain waits for
     * the one prover's partition only, far less than the 20 s grace */
    ASSERT_MSG(stop_s < 10, "SIGTERM drain took %.1f s", stop_s);
    ASSERT(!strstr(log1, "still on a prover after the"));
    h_keep_log(&d, "run1.err");
    h_start_or_fail(&d, cfg_text, 60);
    static uint8_t none[1][N_PARTS * 192];
    check_after_restart(&d, &k, log1, 0, none, 0);
    free(log1);
    h_stop_or_fail(&d, 30);
    /* a third start: everything is finished, nothing is replayed */
    h_keep_log(&d, "run2.err");
    h_start_or_fail(&d, cfg_text, 60);
    char *log3 = h_slurp(d.err_path);
    ASSERT_STR_CONTAINS(log3, "0 unfinished job(s) re-queued");
    ASSERT(!strstr(log3, "proof completed"));
    free(log3);
    c = connect_to(d.addr);
    await_all_verified(c, &k, N_JOBS, NULL);
    cz_close(c);
    h_stop_or_fail(&d, 30);
    h_cleanup(&d);
}

/* Issue 28 §3: SIGTERM counted synthesized partitions waiting for a prover as running and
 * waited for them. 24 one-partition jobs, one prover: synthesis runs ahead and the prover's
 * queue fills; the drain must wait for the one partition on the prover only, and keep the
 * other jobs for the next start, which re-queues exactly the ones not completed. */
TEST_T(sigterm_counts_only_partitions_on_a_prover, 300)
{
    struct daemon d;
    h_new(&d);
    h_start_or_fail(&d, cfg_text, 60);
    struct cz_client *c = connect_to(d.addr);
    char det[512];
    enum { NJ = 24 };
    for (int i = 0; i < NJ; i++) {
        char id[16];
        job_id(id, i);
        ASSERT_EQ_INT(submit(c, id, 16384, 1, job_seed(i), det), 0);
    }
    Cuzk__V1__AwaitProofResponse *a = NULL;
    ASSERT_EQ_INT(await_job(c, "j00", 0, &a, det), 0);   /* SRS made, the pipeline running */
    ASSERT_EQ_INT(a->status, 1);
    protobuf_c_message_free_unpacked(&a->base, NULL);
    cz_close(c);
    usleep(500000);   /* synthesis is far ahead of the one prover by now */
    uint64_t t0 = cuzk_now_ns();
    h_stop_or_fail(&d, 60);
    double stop_s = (double)(cuzk_now_ns() - t0) / 1e9;
    char *log1 = h_slurp(d.err_path);
    const char *line = strstr(log1, "shutting down cuzk engine: ");
    ASSERT(line);
    unsigned on_prover = 99, kept = 0;
    ASSERT(sscanf(line, "shutting down cuzk engine: %u partition(s) on a prover", &on_prover) == 1);
    const char *k = strstr(line, "; ");
    ASSERT(k && sscanf(k, "; %u unfinished job(s) kept", &kept) == 1);
    ASSERT_MSG(on_prover <= 1, "%u partitions counted on the one prover", on_prover);
    /* waiting for the kept jobs' partitions (what the drain did before) would take kept x one
     * proof: the drain must take well under half of that */
    const char *pc = strstr(log1, "proof completed: job=\"j00\" ");
    unsigned long long gpu_ms = 0;
    ASSERT(pc && strstr(pc, "gpu_ms=") && sscanf(strstr(pc, "gpu_ms="), "gpu_ms=%llu", &gpu_ms) == 1);
    double waiting_s = (double)kept * (double)gpu_ms / 1000.0;
    printf("drain %.2f s; waiting for the %u kept jobs would take ~%.1f s\n", stop_s, kept, waiting_s);
    ASSERT_MSG(stop_s < 1.0 + waiting_s / 2, "the drain took %.1f s (waited for queued "
               "partitions? they would take %.1f s)", stop_s, waiting_s);
    int done = 0;
    for (int i = 0; i < NJ; i++) {
        char id[16];
        job_id(id, i);
        done += completions(log1, id);
    }
    ASSERT_MSG(kept >= 2 && (int)kept + done + (int)on_prover >= NJ, "kept %u, done %d", kept, done);
    h_keep_log(&d, "run1.err");
    /* a job once accepted is never refused: not even by an admission bound below their number */
    char cfg2[1024];
    h_cfg_add(cfg2, sizeof cfg2, cfg_text, "daemon", "max_queued_jobs = 3\n");
    h_start_or_fail(&d, cfg2, 60);
    char *log2 = h_slurp(d.err_path), want[120];
    snprintf(want, sizeof want, "%d unfinished job(s) re-queued", NJ - done);
    ASSERT_STR_CONTAINS(log2, want);
    ASSERT_STR_CONTAINS(log2, "0 could not be resumed");
    free(log2);
    free(log1);
    h_stop_or_fail(&d, 60);
    h_cleanup(&d);
}

/* One daemon per state_dir; "off" runs without a journal and says so. */
TEST_T(state_dir_shared_refused_and_off, 120)
{
    struct daemon d;
    h_new(&d);
    char cfg[1024];
    snprintf(cfg, sizeof cfg, "%sstate_dir = \"%%DIR%%/state\"\n", "[daemon]\nlisten = \"unix://%DIR%/cuzk.sock\"\n");
    h_start_or_fail(&d, cfg, 60);
    struct daemon d2;
    h_sibling(&d2, &d, "d2", "[daemon]\nlisten = \"unix://%DIR%/other.sock\"\nstate_dir = \"%DIR%/state\"\n");
    pid_t p2 = h_spawn(&d2, NULL);
    ASSERT_EQ_INT(h_wait(p2, 30), 1);
    char *e2 = h_slurp(d2.err_path), pidmsg[64];
    snprintf(pidmsg, sizeof pidmsg, "is in use by another process (pid %d", (int)d.pid);
    ASSERT_STR_CONTAINS(e2, pidmsg);
    ASSERT_STR_CONTAINS(e2, "state_dir");
    free(e2);
    h_stop_or_fail(&d, 30);
    snprintf(cfg, sizeof cfg, "[daemon]\nlisten = \"unix://%%DIR%%/cuzk.sock\"\nstate_dir = \"off\"\n");
    h_start_or_fail(&d, cfg, 60);
    char *e = h_slurp(d.err_path);
    ASSERT_STR_CONTAINS(e, "accepted jobs live in memory only");
    free(e);
    h_stop_or_fail(&d, 30);
    struct stat st;
    char sd[400];
    snprintf(sd, sizeof sd, "%s/cuzk.sock.state", d.dir);
    ASSERT_MSG(stat(sd, &st) != 0, "state_dir = \"off\" created %s", sd);
    /* a relative path is a configuration error naming the key */
    char *e2c = NULL;
    ASSERT_EQ_INT(h_check_config(&d2, "[daemon]\nlisten = \"unix://%DIR%/other.sock\"\nstate_dir = \"state\"\n",
                                 &e2c), 1);
    ASSERT_STR_CONTAINS(e2c, "[daemon] state_dir = \"state\": expected an absolute directory path");
    free(e2c);
    h_cleanup(&d);
}

/* state_dir on a 1 MiB tmpfs, filled: SubmitProof answers RESOURCE_EXHAUSTED naming the
 * journal; the jobs accepted before are answered, and after a restart too. */
TEST_T(disk_full_resource_exhausted_nothing_lost, 300)
{
    struct daemon d;
    h_new(&d);
    char mnt[400];
    snprintf(mnt, sizeof mnt, "%s/state", d.dir);
    ASSERT(mkdir(mnt, 0755) == 0);
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=1m") != 0) {
        h_cleanup(&d);
        test_skip("cannot mount a small tmpfs to fill (%s; needs root / CAP_SYS_ADMIN)",
                  strerror(errno));
    }
    struct vkit k;
    vkit_make(&k, d.dir, N_CONS);
    char cfg[2048];
    h_cfg_add(cfg, sizeof cfg, cfg_text, "daemon", "state_dir = \"%DIR%/state\"\n");
    h_start_or_fail(&d, cfg, 60);
    struct cz_client *c = connect_to(d.addr);
    char det[512];
    for (int i = 0; i < 3; i++) {
        char id[16];
        job_id(id, i);
        ASSERT_EQ_INT(submit(c, id, N_CONS, N_PARTS, job_seed(i), det), 0);
    }
    await_all_verified(c, &k, 3, NULL);
    /* fill the file system */
    char filler[500];
    snprintf(filler, sizeof filler, "%s/filler", mnt);
    int fd = open(filler, O_WRONLY | O_CREAT, 0644);
    static char block[4096];
    while (write(fd, block, sizeof block) > 0) {}
    close(fd);
    /* 256 KiB of bytes the synthetic kind carries but does not read: more than the slack of
     * the files' last blocks (the WAL is rewritten in place after each checkpoint, so a small
     * request can still fit on a full disk, and is then durably accepted) */
    static uint8_t pad[256 << 10];
    uint8_t s8[8];
    seed_bytes(s8, 7);
    Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    q.request_id = (char *)"no-room";
    q.proof_kind = CUZK__V1__PROOF_KIND__SYNTHETIC;
    q.synthetic_constraints = N_CONS;
    q.synthetic_partitions = N_PARTS;
    q.vanilla_proof.data = s8;
    q.vanilla_proof.len = 8;
    q.randomness.data = pad;
    q.randomness.len = sizeof pad;
    ProtobufCMessage *m = NULL;
    int st = cz_call(c, CZ_METHOD("SubmitProof"), &q.base,
                     &cuzk__v1__submit_proof_response__descriptor, &m, 30000, det, 512);
    if (m) protobuf_c_message_free_unpacked(m, NULL);
    ASSERT_MSG(st == 8, "SubmitProof on a full disk: %s %s", cz_status_name(st), det);
    ASSERT_STR_CONTAINS(det, mnt);
    ASSERT_STR_CONTAINS(det, "disk full");
    /* the jobs accepted before are still answered */
    await_all_verified(c, &k, 3, NULL);
    Cuzk__V1__AwaitProofResponse *a = NULL;
    ASSERT_EQ_INT(await_job(c, "no-room", 0, &a, det), 5);   /* never accepted: NOT_FOUND */
    cz_close(c);
    unlink(filler);
    h_stop_or_fail(&d, 30);
    h_keep_log(&d, "run1.err");
    h_start_or_fail(&d, cfg, 60);
    c = connect_to(d.addr);
    await_all_verified(c, &k, 3, NULL);
    cz_close(c);
    char *log = h_slurp(d.err_path);
    ASSERT(!strstr(log, "proof completed"));   /* answered from the journal, not proved again */
    free(log);
    h_stop_or_fail(&d, 30);
    umount(mnt);
    h_cleanup(&d);
}

/* A 2 KiB PoRep job accepted, then kill -9 before it finished: after the restart it completes
 * without being resubmitted, and the proof verifies with the fixture's key against public
 * inputs this test recomputes. */
TEST_T(kill9_porep_job_replayed, 900)
{
    porep_fixture_skip_if_slow();
    struct param_fixture fx;
    porep_fixture_get(&fx);
    struct cuzk_error err_s = {0}, *err = &err_s;
    struct daemon d;
    h_new(&d);
    h_link_params(d.dir, fx.stem, fx.params);
    const struct fil_seal_proof *p = fil_seal_proof_by_name("StackedDrg2KiBV1_1");
    struct fil_c1 c1;
    ASSERT_OK(fil_c1_generate(&c1, p, 1000, 42, test_seed(), err), err);
    char *good;
    size_t good_n;
    ASSERT_OK(fil_c1_write_wrapper(&good, &good_n, &c1, err), err);
    const char *cfg =
        "[daemon]\nlisten = \"unix://%DIR%/cuzk.sock\"\n[memory]\ntotal_budget = \"6GiB\"\n"
        "[pipeline]\nmax_parallel_synthesis = 2\n[srs]\nparam_cache = \"%DIR%\"\n";
    h_start_or_fail(&d, cfg, 60);
    struct cz_client *cl = connect_to(d.addr);
    Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    q.request_id = (char *)"porep-crash";
    q.proof_kind = CUZK__V1__PROOF_KIND__POREP_SEAL_COMMIT;
    q.sector_size = 2048;
    q.sector_number = 42;
    q.miner_id = 1000;
    q.vanilla_proof.data = (uint8_t *)good;
    q.vanilla_proof.len = good_n;
    ProtobufCMessage *m = NULL;
    char det[512];
    int st = cz_call(cl, CZ_METHOD("SubmitProof"), &q.base,
                     &cuzk__v1__submit_proof_response__descriptor, &m, 60000, det, sizeof det);
    ASSERT_MSG(st == 0, "SubmitProof: %s %s", cz_status_name(st), det);
    protobuf_c_message_free_unpacked(m, NULL);
    cz_close(cl);
    usleep(500000);   /* accepted, loading its SRS: far from finished (the proof takes ~15 s) */
    h_kill9_or_fail(&d);
    char *log1 = h_slurp(d.err_path);
    ASSERT_MSG(!strstr(log1, "proof completed: job=\"porep-crash\""), "finished before the kill");
    free(log1);
    h_start_or_fail(&d, cfg, 60);
    char *log2 = h_slurp(d.err_path);
    ASSERT_STR_CONTAINS(log2, "journal: job=\"porep-crash\" kind=porep-c2 priority=");
    free(log2);
    cl = connect_to(d.addr);
    Cuzk__V1__AwaitProofResponse *a = NULL;
    ASSERT_EQ_INT(await_job(cl, "porep-crash", 0, &a, det), 0);
    ASSERT_MSG(a->status == 1, "status %d: %s", a->status, a->error_message);
    ASSERT_EQ_U64(a->proof.len, G16_PROOF_BYTES);
    struct g16_vk vk;
    ASSERT_OK(g16_vk_read(&vk, fx.vk, err), err);
    struct g16_pvk *pvk = g16_pvk_new(&vk, err);
    ASSERT_MSG(pvk, "%s", err->msg);
    struct g16_proof proof;
    ASSERT_OK(g16_proof_from_bytes(&proof, a->proof.data, err), err);
    size_t ni = fil_porep_num_inputs(p);
    fr_t *pub = malloc(ni * sizeof *pub);
    ASSERT_OK(fil_porep_public_inputs(pub, p, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed, 0, err), err);
    ASSERT_OK(g16_verify(pvk, &proof, pub, ni, err), err);
    protobuf_c_message_free_unpacked(&a->base, NULL);
    cz_close(cl);
    free(pub);
    g16_pvk_free(pvk);
    g16_vk_free(&vk);
    fil_c1_free(&c1);
    cuzk_free(good);
    h_stop_or_fail(&d, 60);
    h_cleanup(&d);
}
#endif
