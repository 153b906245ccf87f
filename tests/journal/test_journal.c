/* test_journal.c: the job journal (src/journal) on its own: records written, reopened and
 * replayed in accept order with the bytes that were written; a process that dies without
 * closing (kill -9 stand-in: the child _exits); a write-ahead log torn or garbled at a random
 * byte of its last frame (the damage reported, the last transaction dropped, everything before
 * it kept); a record garbled on disk (named and dropped by its checksum); a database that is
 * not one any more (moved aside, a fresh journal); retention by count and age; one process per
 * journal; superseded duplicates of an id; results written while another thread stages large
 * requests; disk full (a tiny tmpfs, when this process may mount one). The oracle is what each
 * test wrote itself. */
#include "test.h"
#include "wal_frames.h"

#ifndef CUZK_CLIENT
#define CUZK_CLIENT 0
#endif

#if !CUZK_CLIENT
TEST(journal_needs_sqlite) { test_skip("built without the daemon's libraries (SQLite)"); }
#else
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cuzk/journal.h"

static void tmpdir(char *out, size_t cap)
{
    const char *t = getenv("TMPDIR");
    snprintf(out, cap, "%s/cuzk-journal-XXXXXX", t && *t ? t : "/tmp");
    ASSERT(mkdtemp(out));
}

static void rmrf(const char *dir)
{
    char cmd[600];
    if (!strstr(dir, "cuzk-journal-")) return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
}

static const struct journal_options OPTS = {3600 * 1000, 1000};

static struct journal *jopen(const char *dir, struct journal_report *rep)
{
    struct journal *j = NULL;
    struct cuzk_error err_s = {0}, *err = &err_s;
    ASSERT_OK(journal_open(&j, dir, &OPTS, rep, err), err);
    return j;
}

/* What a test expects of one record. */
struct want {
    char id[64];
    int kind, priority;
    uint8_t *req;
    size_t req_len;
    bool finished;
    int status;
    char error[64];
    uint8_t proof[384];
    size_t proof_len;
    uint64_t token;
};

static void want_make(struct want *w, const char *id, int kind, int prio, size_t req_len)
{
    memset(w, 0, sizeof *w);
    snprintf(w->id, sizeof w->id, "%s", id);
    w->kind = kind;
    w->priority = prio;
    w->req_len = req_len;
    w->req = malloc(req_len ? req_len : 1);
    cuzk_rng_bytes(test_rng(), w->req, req_len);
}

static void stage(struct journal *j, struct want *w)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    ASSERT_OK(journal_stage(j, w->id, w->kind, w->priority, w->req, w->req_len, &w->token, err),
              err);
    ASSERT(w->token > 0);
}

static void finish(struct journal *j, struct want *w, int status, const char *error,
                   size_t proof_len)
{
    w->finished = true;
    w->status = status;
    snprintf(w->error, sizeof w->error, "%s", error);
    w->proof_len = proof_len;
    cuzk_rng_bytes(test_rng(), w->proof, proof_len);
    struct journal_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "%s", w->id);
    r.status = status;
    r.error = w->error;
    r.proof = w->proof;
    r.proof_len = proof_len;
    r.total_ms = 1234;
    r.gpu_compute_ms = 567;
    r.finished_at_ms = (uint64_t)time(NULL) * 1000;
    journal_finish(j, w->token, &r);
}

/* Replay into a list of copies. */
struct got {
    size_t n;
    struct journal_record r[64];
    uint8_t *req[64], *proof[64];
    char error[64][128];
};
static int collect(void *ctx, const struct journal_record *r)
{
    struct got *g = ctx;
    ASSERT(g->n < 64);
    size_t i = g->n++;
    g->r[i] = *r;
    g->req[i] = malloc(r->request_len + 1);
    if (r->request_len) memcpy(g->req[i], r->request, r->request_len);
    g->proof[i] = malloc(r->proof_len + 1);
    if (r->proof_len) memcpy(g->proof[i], r->proof, r->proof_len);
    snprintf(g->error[i], sizeof g->error[i], "%s", r->error ? r->error : "");
    return 0;
}
static void replay(struct journal *j, struct got *g)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    memset(g, 0, sizeof *g);
    ASSERT_OK(journal_replay(j, collect, g, err), err);
}

/* The replayed records are exactly wants[0..n) (in this order), with their bytes. */
static void expect(const struct got *g, struct want *const *w, size_t n)
{
    ASSERT_EQ_U64(g->n, n);
    for (size_t i = 0; i < n; i++) {
        const struct journal_record *r = &g->r[i];
        ASSERT_MSG(!strcmp(r->id, w[i]->id), "record %zu is '%s', expected '%s'", i, r->id,
                   w[i]->id);
        ASSERT_EQ_U64(r->seq, w[i]->token);
        ASSERT_EQ_INT(r->kind, w[i]->kind);
        ASSERT_EQ_INT(r->priority, w[i]->priority);
        ASSERT_EQ_INT(r->finished, w[i]->finished);
        if (i) ASSERT(g->r[i - 1].seq < r->seq);
        if (!w[i]->finished) {
            ASSERT_EQ_U64(r->request_len, w[i]->req_len);
            ASSERT_MEM_EQ(g->req[i], w[i]->req, w[i]->req_len);
        } else {
            ASSERT_EQ_INT(r->status, w[i]->status);
            ASSERT_MSG(!strcmp(g->error[i], w[i]->error), "error '%s', expected '%s'",
                       g->error[i], w[i]->error);
            ASSERT_EQ_U64(r->proof_len, w[i]->proof_len);
            if (r->proof_len) ASSERT_MEM_EQ(g->proof[i], w[i]->proof, r->proof_len);
            ASSERT_EQ_U64(r->total_ms, 1234);
            ASSERT_EQ_U64(r->gpu_compute_ms, 567);
            ASSERT_EQ_U64(r->request_len, 0);   /* the request is dropped when it finishes */
        }
    }
}
static void got_free(struct got *g)
{
    for (size_t i = 0; i < g->n; i++) { free(g->req[i]); free(g->proof[i]); }
}

static off_t file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? st.st_size : -1;
}

/* Run fn's journal writes in a child that dies without closing (the WAL stays as a kill -9
 * leaves it); the wants are shared through a pipe of tokens. */
static void in_dying_child(const char *dir, struct want *const *w, size_t n,
                           void (*fn)(struct journal *, struct want *const *, size_t))
{
    int p[2];
    ASSERT(pipe(p) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        struct journal *j = jopen(dir, NULL);
        fn(j, w, n);
        for (size_t i = 0; i < n; i++)
            if (write(p[1], &w[i]->token, 8) != 8) _exit(3);
        _exit(0);   /* no journal_close: nothing is checkpointed */
    }
    close(p[1]);
    for (size_t i = 0; i < n; i++) ASSERT(read(p[0], &w[i]->token, 8) == 8);
    close(p[0]);
    int st;
    ASSERT(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ------------------------------------------------------------------ tests -- */

TEST_T(write_reopen_replay_in_accept_order, 60)
{
    char dir[256];
    tmpdir(dir, sizeof dir);
    struct want a, b, c, d, e;
    want_make(&a, "job-a", 100, 2, 1000);
    want_make(&b, "job-b", 1, 3, 70000);   /* over a page: overflow pages */
    want_make(&c, "job-c", 3, 4, 0);
    want_make(&d, "job-d", 100, 1, 10);
    want_make(&e, "job-e", 2, 2, 33);
    struct journal_report rep;
    struct journal *j = jopen(dir, &rep);
    ASSERT(rep.created);
    stage(j, &a); stage(j, &b); stage(j, &c); stage(j, &d); stage(j, &e);
    finish(j, &b, 1, "", 384);
    finish(j, &d, 2, "partition 0 synthesis failed: x", 0);
    journal_discard(j, c.token);   /* not accepted after all */
    struct got g;
    replay(j, &g);                 /* the same process sees what it wrote */
    struct want *w1[] = {&a, &b, &d, &e};
    expect(&g, w1, 4);
    got_free(&g);
    journal_close(j);

    j = jopen(dir, &rep);
    ASSERT(!rep.created && !rep.wal_damaged && !rep.moved_aside);
    ASSERT_EQ_U64(rep.pending, 2);
    ASSERT_EQ_U64(rep.finished, 2);
    replay(j, &g);
    expect(&g, w1, 4);
    got_free(&g);
    /* a finished record is not finished again; a discarded one cannot be finished */
    finish(j, &c, 1, "", 192);
    struct journal_record r2;
    memset(&r2, 0, sizeof r2);
    r2.status = 3;
    r2.error = "late";
    journal_finish(j, b.token, &r2);
    replay(j, &g);
    expect(&g, w1, 4);
    got_free(&g);
    journal_close(j);
    rmrf(dir);
}

static void w_stage_finish(struct journal *j, struct want *const *w, size_t n)
{
    for (size_t i = 0; i < n; i++) stage(j, w[i]);
    finish(j, w[1], 1, "", 192);
}

TEST_T(process_dies_without_closing, 60)
{
    char dir[256], wal[300];
    tmpdir(dir, sizeof dir);
    struct want a, b, c;
    want_make(&a, "a", 100, 2, 500);
    want_make(&b, "b", 100, 2, 9000);
    want_make(&c, "c", 1, 4, 3);
    struct want *w[] = {&a, &b, &c};
    in_dying_child(dir, w, 3, w_stage_finish);
    b.finished = true;   /* the child's finish(): reproduce its expectations */
    b.status = 1;
    b.proof_len = 192;
    snprintf(wal, sizeof wal, "%s/journal.db-wal", dir);
    ASSERT_MSG(file_size(wal) > 0, "no write-ahead log left: the test would not test recovery");
    struct journal_report rep;
    struct journal *j = jopen(dir, &rep);
    ASSERT(!rep.wal_damaged);
    ASSERT_EQ_U64(rep.pending, 2);
    ASSERT_EQ_U64(rep.finished, 1);
    struct got g;
    replay(j, &g);
    ASSERT_EQ_U64(g.n, 3);
    /* the proof bytes came from the child's RNG stream: check the request bytes and states */
    for (int i = 0; i < 3; i++) {
        ASSERT(!strcmp(g.r[i].id, w[i]->id));
        ASSERT_EQ_INT(g.r[i].finished, i == 1);
        if (i != 1) ASSERT_MEM_EQ(g.req[i], w[i]->req, w[i]->req_len);
        else ASSERT_EQ_U64(g.r[i].proof_len, 192);
    }
    got_free(&g);
    journal_close(j);
    rmrf(dir);
}

static void w_three_then_finish_first(struct journal *j, struct want *const *w, size_t n)
{
    for (size_t i = 0; i < n; i++) stage(j, w[i]);
    finish(j, w[0], 1, "", 192);
}

/* The last transaction (the first record's result) torn by truncation or a garbled byte at a
 * random offset of its last frame: reported, dropped; the three accepts before it survive. */
static void torn_case(bool truncate)
{
    char dir[256], wal[300];
    tmpdir(dir, sizeof dir);
    struct want a, b, c;
    want_make(&a, "t-a", 100, 2, 300);
    want_make(&b, "t-b", 100, 3, 5000);
    want_make(&c, "t-c", 1, 2, 20);
    struct want *w[] = {&a, &b, &c};
    in_dying_child(dir, w, 3, w_three_then_finish_first);
    snprintf(wal, sizeof wal, "%s/journal.db-wal", dir);
    off_t size = wal_current_end(wal);
    const off_t frame = 24 + 4096;   /* SQLite's default page size */
    ASSERT_MSG(size >= 32 + frame, "WAL of %lld bytes", (long long)size);
    off_t at = size - 1 - (off_t)(cuzk_rng_u64(test_rng()) % (uint64_t)frame);
    int fd = open(wal, O_RDWR);
    ASSERT(fd >= 0);
    if (truncate) {
        ASSERT(ftruncate(fd, at) == 0);
    } else {
        uint8_t byte;
        ASSERT(pread(fd, &byte, 1, at) == 1);
        byte ^= (uint8_t)(1 + cuzk_rng_u64(test_rng()) % 255);
        ASSERT(pwrite(fd, &byte, 1, at) == 1);
    }
    close(fd);
    struct journal_report rep;
    struct journal *j = jopen(dir, &rep);
    ASSERT_MSG(rep.wal_damaged, "%s at byte %lld of %lld not reported", truncate ? "truncation"
               : "garbled byte", (long long)at, (long long)size);
    ASSERT_EQ_U64(rep.wal_damage_offset, (uint64_t)(size - frame));
    ASSERT_EQ_U64(rep.pending, 3);
    ASSERT_EQ_U64(rep.finished, 0);
    struct got g;
    replay(j, &g);
    expect(&g, w, 3);   /* a's result is gone: it is unfinished again, with its request */
    got_free(&g);
    /* and the journal goes on */
    struct want d;
    want_make(&d, "t-d", 100, 2, 10);
    stage(j, &d);
    journal_close(j);
    j = jopen(dir, &rep);
    ASSERT(!rep.wal_damaged);
    ASSERT_EQ_U64(rep.pending, 4);
    journal_close(j);
    rmrf(dir);
}

TEST_T(torn_wal_tail_truncated, 60) { torn_case(true); }
TEST_T(torn_wal_tail_garbled, 60) { torn_case(false); }

/* A byte of a record's request garbled in the database file: SQLite cannot see it (pages
 * carry no checksum); the record's own checksum does, and the warning names the record. */
TEST_T(garbled_record_named_and_dropped, 60)
{
    char dir[256], db[300], logp[300];
    tmpdir(dir, sizeof dir);
    struct want a, b, c;
    want_make(&a, "keep-1", 100, 2, 100);
    want_make(&b, "garbled-one", 100, 2, 3000);
    want_make(&c, "keep-2", 100, 2, 100);
    struct journal *j = jopen(dir, NULL);
    stage(j, &a); stage(j, &b); stage(j, &c);
    journal_close(j);   /* checkpointed into journal.db */
    snprintf(db, sizeof db, "%s/journal.db", dir);
    char *file = NULL;
    {
        FILE *f = fopen(db, "rb");
        ASSERT(f);
        off_t n = file_size(db);
        file = malloc((size_t)n);
        ASSERT(fread(file, 1, (size_t)n, f) == (size_t)n);
        fclose(f);
        uint8_t *hit = memmem(file, (size_t)n, b.req + 1000, 64);
        ASSERT_MSG(hit, "request bytes not found in %s", db);
        off_t at = (off_t)((char *)hit - file) + (off_t)(cuzk_rng_u64(test_rng()) % 64);
        int fd = open(db, O_RDWR);
        uint8_t byte = (uint8_t)(file[at] ^ 0x5a);
        ASSERT(pwrite(fd, &byte, 1, at) == 1);
        close(fd);
    }
    free(file);
    /* the warning goes to the log (stderr): capture it */
    snprintf(logp, sizeof logp, "%s/log", dir);
    fflush(stderr);
    int saved = dup(2), lf = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(lf, 2);
    struct journal_report rep;
    j = jopen(dir, &rep);
    struct got g;
    replay(j, &g);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(lf);
    struct want *w[] = {&a, &c};
    expect(&g, w, 2);
    got_free(&g);
    FILE *f = fopen(logp, "r");
    char log[8192] = {0};
    ASSERT(f && fread(log, 1, sizeof log - 1, f) > 0);
    fclose(f);
    ASSERT_STR_CONTAINS(log, "job 'garbled-one', unfinished) does not match its checksum");
    ASSERT_STR_CONTAINS(log, "its client must resubmit it");
    /* dropped for good: the next start does not warn again */
    replay(j, &g);
    expect(&g, w, 2);
    got_free(&g);
    journal_close(j);
    rmrf(dir);
}

/* journal.db overwritten at its header: SQLite says "not a database"; the journal moves it
 * aside (kept for inspection), says nothing could be read, and starts afresh. */
TEST_T(corrupt_database_moved_aside, 60)
{
    char dir[256], db[300];
    tmpdir(dir, sizeof dir);
    struct want a;
    want_make(&a, "x", 100, 2, 100);
    struct journal *j = jopen(dir, NULL);
    stage(j, &a);
    journal_close(j);
    snprintf(db, sizeof db, "%s/journal.db", dir);
    int fd = open(db, O_RDWR);
    uint8_t junk[100];
    cuzk_rng_bytes(test_rng(), junk, sizeof junk);
    ASSERT(pwrite(fd, junk, sizeof junk, 0) == (ssize_t)sizeof junk);
    close(fd);
    struct journal_report rep;
    j = jopen(dir, &rep);
    ASSERT(rep.moved_aside);
    ASSERT(rep.salvage_incomplete);
    ASSERT_EQ_U64(rep.salvaged, 0);
    ASSERT_EQ_U64(rep.pending, 0);
    ASSERT_MSG(file_size(rep.aside_path) > 0, "damaged file not kept at %s", rep.aside_path);
    struct want b;
    want_make(&b, "y", 100, 2, 10);
    stage(j, &b);
    journal_close(j);
    j = jopen(dir, &rep);
    ASSERT(!rep.moved_aside);
    struct got g;
    replay(j, &g);
    struct want *w[] = {&b};
    expect(&g, w, 1);
    got_free(&g);
    journal_close(j);
    rmrf(dir);
}

/* A page in the middle of journal.db overwritten with random bytes: quick_check fails, the
 * file is moved aside, and the records that can still be read (up to the damage, and intact by
 * their checksums) are copied into the fresh journal with their bytes; the rest is reported. */
TEST_T(corrupt_database_salvaged_up_to_the_damage, 60)
{
    char dir[256], db[300];
    tmpdir(dir, sizeof dir);
    enum { N = 40 };
    struct want w[N];
    struct journal *j = jopen(dir, NULL);
    for (int i = 0; i < N; i++) {
        char id[16];
        snprintf(id, sizeof id, "s%02d", i);
        want_make(&w[i], id, 100, 2, 3000);   /* most pages hold one record */
        stage(j, &w[i]);
    }
    journal_close(j);
    snprintf(db, sizeof db, "%s/journal.db", dir);
    off_t size = file_size(db);
    ASSERT(size >= 20 * 4096);
    off_t page = (size / 4096) * 3 / 4;   /* past the first records, before the last ones */
    uint8_t junk[4096];
    cuzk_rng_bytes(test_rng(), junk, sizeof junk);
    int fd = open(db, O_RDWR);
    ASSERT(pwrite(fd, junk, sizeof junk, page * 4096) == (ssize_t)sizeof junk);
    close(fd);
    char logp[300];
    snprintf(logp, sizeof logp, "%s/log", dir);
    fflush(stderr);
    int saved = dup(2), lf = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(lf, 2);
    struct journal_report rep;
    j = jopen(dir, &rep);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(lf);
    ASSERT(rep.moved_aside);
    ASSERT_MSG(rep.salvaged >= 1 && rep.salvaged < N, "salvaged %u of %d", rep.salvaged, N);
    /* the warning names the records it could not read (the id index survived) */
    FILE *f = fopen(logp, "r");
    char log[16384] = {0};
    ASSERT(f && fread(log, 1, sizeof log - 1, f) > 0);
    fclose(f);
    fputs(log, stderr);
    if (rep.salvage_incomplete) {
        char last[16];
        snprintf(last, sizeof last, "'s%02d'", N - 1);
        ASSERT_STR_CONTAINS(log, "the records after it are lost");
        ASSERT_STR_CONTAINS(log, last);
    }
    ASSERT(rep.salvage_incomplete || rep.bad_checksum);
    ASSERT_EQ_U64(rep.pending, rep.salvaged);
    struct got g;
    replay(j, &g);
    /* an in-order subset of what was written, every one with its exact bytes */
    ASSERT_EQ_U64(g.n, rep.salvaged);
    size_t k = 0;
    for (size_t i = 0; i < g.n; i++) {
        while (k < N && strcmp(w[k].id, g.r[i].id)) k++;
        ASSERT_MSG(k < N, "replayed '%s' out of order or unknown", g.r[i].id);
        ASSERT_EQ_U64(g.r[i].seq, w[k].token);
        ASSERT_EQ_U64(g.r[i].request_len, w[k].req_len);
        ASSERT_MEM_EQ(g.req[i], w[k].req, w[k].req_len);
    }
    ASSERT(!strcmp(g.r[0].id, "s00"));   /* the damage is not at the start */
    got_free(&g);
    journal_close(j);
    rmrf(dir);
}

TEST_T(retention_by_count_and_age, 60)
{
    char dir[256];
    tmpdir(dir, sizeof dir);
    struct want w[6];
    struct journal_options o = {3600 * 1000, 3};
    struct journal *j = NULL;
    struct cuzk_error err_s = {0}, *err = &err_s;
    ASSERT_OK(journal_open(&j, dir, &o, NULL, err), err);
    for (int i = 0; i < 6; i++) {
        char id[16];
        snprintf(id, sizeof id, "r%d", i);
        want_make(&w[i], id, 100, 2, 50);
        stage(j, &w[i]);
    }
    for (int i = 0; i < 5; i++) finish(j, &w[i], 1, "", 192);   /* w[5] stays unfinished */
    journal_close(j);
    struct journal_report rep;
    ASSERT_OK(journal_open(&j, dir, &o, &rep, err), err);
    ASSERT_EQ_U64(rep.expired, 2);
    struct got g;
    replay(j, &g);
    struct want *keep[] = {&w[2], &w[3], &w[4], &w[5]};
    expect(&g, keep, 4);
    got_free(&g);
    journal_close(j);
    /* by age: every result is older than 1 ms by now; the unfinished job is never dropped */
    usleep(20000);
    o.retention_ms = 1;
    ASSERT_OK(journal_open(&j, dir, &o, &rep, err), err);
    ASSERT_EQ_U64(rep.finished, 0);
    ASSERT_EQ_U64(rep.pending, 1);
    journal_close(j);
    rmrf(dir);
}

TEST_T(one_process_per_journal, 30)
{
    char dir[256];
    tmpdir(dir, sizeof dir);
    struct journal *j = jopen(dir, NULL), *j2 = NULL;
    struct cuzk_error err_s = {0}, *err = &err_s;
    ASSERT_CODE(journal_open(&j2, dir, &OPTS, NULL, err), CUZK_E_BUSY, err);
    char pid[32];
    snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
    ASSERT_STR_CONTAINS(err->msg, pid);
    ASSERT_STR_CONTAINS(err->msg, dir);
    journal_close(j);
    j = jopen(dir, NULL);   /* free again */
    journal_close(j);
    rmrf(dir);
}

/* One record per id survives a restart: a failed job replaced by a new one with the same id
 * leaves the new one; a request that joined a live job but whose record was not yet deleted
 * when the process died leaves the live one. */
TEST_T(superseded_duplicates_of_an_id, 60)
{
    char dir[256];
    tmpdir(dir, sizeof dir);
    struct want f1, f2, l1, l2, c1, c2;
    want_make(&f1, "retried", 100, 2, 10);
    want_make(&f2, "retried", 100, 2, 11);
    want_make(&l1, "live", 100, 2, 12);
    want_make(&l2, "live", 100, 2, 13);
    want_make(&c1, "done", 100, 2, 14);
    want_make(&c2, "done", 100, 2, 15);
    struct journal *j = jopen(dir, NULL);
    stage(j, &f1);
    finish(j, &f1, 2, "failed", 0);
    stage(j, &f2);                  /* the retry */
    stage(j, &l1);
    stage(j, &l2);                  /* joined l1; its discard never came */
    stage(j, &c1);
    finish(j, &c1, 1, "", 192);
    stage(j, &c2);                  /* joined the completed c1 */
    journal_close(j);
    struct journal_report rep;
    j = jopen(dir, &rep);
    ASSERT_EQ_U64(rep.superseded, 3);
    struct got g;
    replay(j, &g);
    struct want *w[] = {&f2, &l1, &c1};
    expect(&g, w, 3);
    got_free(&g);
    journal_close(j);
    rmrf(dir);
}

/* Results written while another thread stages large requests (the engine's finish hook must
 * not wait: such results are queued and written by the stager): none is lost. */
struct stager { struct journal *j; struct want *w; int n; };
static void *stager_main(void *arg)
{
    struct stager *s = arg;
    for (int i = 0; i < s->n; i++) stage(s->j, &s->w[i]);
    return NULL;
}
TEST_T(results_while_staging_large_requests, 120)
{
    char dir[256];
    tmpdir(dir, sizeof dir);
    enum { NF = 24, NS = 12 };
    struct want *f = calloc(NF, sizeof *f), *big = calloc(NS, sizeof *big);
    struct journal *j = jopen(dir, NULL);
    for (int i = 0; i < NF; i++) {
        char id[16];
        snprintf(id, sizeof id, "f%d", i);
        want_make(&f[i], id, 100, 2, 100);
        stage(j, &f[i]);
    }
    for (int i = 0; i < NS; i++) {
        char id[16];
        snprintf(id, sizeof id, "big%d", i);
        want_make(&big[i], id, 1, 2, 3u << 20);
    }
    struct stager s = {j, big, NS};
    pthread_t t;
    pthread_create(&t, NULL, stager_main, &s);
    for (int i = 0; i < NF; i++) {
        finish(j, &f[i], 1, "", 192);
        usleep(2000);
    }
    pthread_join(t, NULL);
    journal_close(j);
    struct journal_report rep;
    j = jopen(dir, &rep);
    ASSERT_EQ_U64(rep.finished, NF);
    ASSERT_EQ_U64(rep.pending, NS);
    struct got g;
    replay(j, &g);
    struct want *w[NF + NS];
    for (int i = 0; i < NF; i++) w[i] = &f[i];
    for (int i = 0; i < NS; i++) w[NF + i] = &big[i];
    expect(&g, w, NF + NS);
    got_free(&g);
    journal_close(j);
    /* bounded: the 36 MiB of requests sit in the database once, not in the log too */
    char wal[300];
    snprintf(wal, sizeof wal, "%s/journal.db-wal", dir);
    ASSERT(file_size(wal) <= 0);
    rmrf(dir);
}

/* A state directory on a 512 KiB tmpfs: a request that does not fit is refused with
 * CUZK_E_NOMEM naming the journal, and the records accepted before it are all there. */
TEST_T(disk_full_refuses_and_keeps_what_was_accepted, 60)
{
    char dir[256], mnt[300];
    tmpdir(dir, sizeof dir);
    snprintf(mnt, sizeof mnt, "%s/tiny", dir);
    ASSERT(mkdir(mnt, 0755) == 0);
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=512k") != 0) {
        rmrf(dir);
        test_skip("cannot mount a small tmpfs to fill (%s; needs root / CAP_SYS_ADMIN)",
                  strerror(errno));
    }
    struct want a, b, big;
    want_make(&a, "small-1", 100, 2, 1000);
    want_make(&b, "small-2", 100, 2, 1000);
    want_make(&big, "too-big", 1, 2, 2u << 20);
    struct journal *j = jopen(mnt, NULL);
    stage(j, &a);
    stage(j, &b);
    struct cuzk_error err_s = {0}, *err = &err_s;
    uint64_t tok = 0;
    ASSERT_CODE(journal_stage(j, big.id, big.kind, big.priority, big.req, big.req_len, &tok, err),
                CUZK_E_NOMEM, err);
    ASSERT_STR_CONTAINS(err->msg, mnt);
    ASSERT_STR_CONTAINS(err->msg, "disk full");
    finish(j, &a, 1, "", 192);   /* still writable for small things */
    journal_close(j);
    j = jopen(mnt, NULL);
    struct got g;
    replay(j, &g);
    struct want *w[] = {&a, &b};
    expect(&g, w, 2);
    got_free(&g);
    journal_close(j);
    umount(mnt);
    rmrf(dir);
}

/* NI-PoRep's aggregate (schema version 2): kept with the result and replayed byte for byte;
 * a version-1 file (no aggregate column) is upgraded on open and its records stay valid. */
struct agg_got { size_t n; uint8_t agg[2][600]; size_t agg_len[2], proof_len[2]; };
static int agg_collect(void *ctx, const struct journal_record *r)
{
    struct agg_got *g = ctx;
    ASSERT(g->n < 2 && r->aggregate_len <= sizeof g->agg[0]);
    if (r->aggregate_len) memcpy(g->agg[g->n], r->aggregate, r->aggregate_len);
    g->agg_len[g->n] = r->aggregate_len;
    g->proof_len[g->n++] = r->proof_len;
    return 0;
}

TEST_T(aggregate_kept_and_version1_upgraded, 60)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    char dir[256], path[400];
    tmpdir(dir, sizeof dir);
    struct want a, b;
    want_make(&a, "ni-plain", 101, 2, 100);
    want_make(&b, "ni-agg", 101, 2, 100);
    struct journal *j = jopen(dir, NULL);
    stage(j, &a);
    finish(j, &a, 1, "", 384);
    journal_close(j);
    /* make it a version-1 file: no aggregate column */
    snprintf(path, sizeof path, "%s/journal.db", dir);
    sqlite3 *db = NULL;
    ASSERT(sqlite3_open(path, &db) == SQLITE_OK);
    ASSERT_MSG(sqlite3_exec(db, "ALTER TABLE jobs DROP COLUMN aggregate; PRAGMA user_version=1",
                            NULL, NULL, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(db));
    sqlite3_close(db);

    struct journal_report rep;
    j = jopen(dir, &rep);
    ASSERT(!rep.moved_aside);
    ASSERT_EQ_U64(rep.finished, 1);
    stage(j, &b);
    uint8_t agg[500];
    cuzk_rng_bytes(test_rng(), agg, sizeof agg);
    struct journal_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "%s", b.id);
    r.status = 1;
    r.error = "";
    r.proof = b.proof;
    r.proof_len = 192;
    r.aggregate = agg;
    r.aggregate_len = sizeof agg;
    r.finished_at_ms = (uint64_t)time(NULL) * 1000;   /* else retention drops it at once */
    journal_finish(j, b.token, &r);
    journal_close(j);

    j = jopen(dir, &rep);
    ASSERT(!rep.moved_aside);
    ASSERT_EQ_U64(rep.finished, 2);
    struct agg_got g;
    memset(&g, 0, sizeof g);
    ASSERT_OK(journal_replay(j, agg_collect, &g, err), err);
    ASSERT_EQ_U64(g.n, 2);
    ASSERT_EQ_U64(g.proof_len[0], 384);
    ASSERT_EQ_U64(g.agg_len[0], 0);
    ASSERT_EQ_U64(g.proof_len[1], 192);
    ASSERT_EQ_U64(g.agg_len[1], sizeof agg);
    ASSERT_MEM_EQ(g.agg[1], agg, sizeof agg);
    journal_close(j);

    /* the aggregate is under the record's checksum: a changed byte drops the record */
    ASSERT(sqlite3_open(path, &db) == SQLITE_OK);
    ASSERT(sqlite3_exec(db, "UPDATE jobs SET aggregate = zeroblob(500) WHERE id = 'ni-agg'", NULL,
                        NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    j = jopen(dir, &rep);
    memset(&g, 0, sizeof g);
    ASSERT_OK(journal_replay(j, agg_collect, &g, err), err);
    ASSERT_EQ_U64(g.n, 1);
    journal_close(j);
    free(a.req);
    free(b.req);
    rmrf(dir);
}
#endif
