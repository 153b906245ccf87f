/* test_journal_damage.c: the journal against damage to one of its files after the process died
 * without closing (kill -9 stand-in: a child _exits): the write-ahead log deleted, cut at random
 * bytes (many seeds), its tail torn, a byte of it flipped; journal.db cut, deleted, its id index
 * garbled in a way PRAGMA quick_check does not see; the acknowledgement log garbled. The oracle
 * is what the test wrote: every id it staged is either replayed with its exact bytes or named
 * by journal_lost (never both, never neither), the report's counts match both lists, and the
 * damage classes that can take nothing (any one WAL damage, a garbled index) lose exactly 0. */
#include "test.h"
#include "wal_frames.h"

#ifndef CUZK_CLIENT
#define CUZK_CLIENT 0
#endif

#if !CUZK_CLIENT
TEST(journal_damage_needs_sqlite) { test_skip("built without the daemon's libraries (SQLite)"); }
#else
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cuzk/journal.h"

#define N 20          /* jobs staged */
#define FIN_EVERY 4   /* every 4th finished (after all were staged: in the WAL only) */

static const struct journal_options OPTS = {3600 * 1000, 1000};

struct job {
    char id[32];
    uint8_t req[3000];
    size_t req_len;
    bool finished;
};
static struct job jobs[N];

static void tmpdir(char *out, size_t cap)
{
    const char *t = getenv("TMPDIR");
    snprintf(out, cap, "%s/cuzk-journal-XXXXXX", t && *t ? t : "/tmp");
    ASSERT(mkdtemp(out));
}

static void sh(const char *fmt, const char *a, const char *b)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    ASSERT_MSG(system(cmd) == 0, "%s failed", cmd);
}

static void rmrf(const char *dir)
{
    if (strstr(dir, "cuzk-journal-")) sh("rm -rf '%s'%s", dir, "");
}

static off_t file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? st.st_size : -1;
}

/* N jobs staged in a child that then finishes every FIN_EVERY-th and dies without closing. */
static void populate(const char *dir)
{
    for (int i = 0; i < N; i++) {
        snprintf(jobs[i].id, sizeof jobs[i].id, "job-%02d0", i);   /* gaps: see index test */
        jobs[i].req_len = 100 + cuzk_rng_u64(test_rng()) % 2900;
        cuzk_rng_bytes(test_rng(), jobs[i].req, jobs[i].req_len);
        jobs[i].finished = i % FIN_EVERY == 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        struct journal *j = NULL;
        struct cuzk_error err = {0};
        if (journal_open(&j, dir, &OPTS, NULL, &err)) _exit(2);
        uint64_t tok[N];
        for (int i = 0; i < N; i++)
            if (journal_stage(j, jobs[i].id, 100, 2, jobs[i].req, jobs[i].req_len, &tok[i], &err))
                _exit(3);
        for (int i = 0; i < N; i++) {
            if (!jobs[i].finished) continue;
            uint8_t proof[192];
            memset(proof, i, sizeof proof);
            struct journal_record r;
            memset(&r, 0, sizeof r);
            r.status = JOURNAL_COMPLETED;
            r.error = "";
            r.proof = proof;
            r.proof_len = sizeof proof;
            r.finished_at_ms = (uint64_t)time(NULL) * 1000;
            journal_finish(j, tok[i], &r);
        }
        _exit(0);   /* no journal_close */
    }
    int st;
    ASSERT(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static int job_of(const char *id)
{
    for (int i = 0; i < N; i++)
        if (!strcmp(jobs[i].id, id)) return i;
    return -1;
}

/* What a start found. */
struct outcome {
    struct journal_report rep;
    int state[N];        /* 0 not seen, 1 replayed unfinished, 2 replayed finished, 3 lost */
    unsigned lost, undone;
    char log[65536];
};

static int on_record(void *ctx, const struct journal_record *r)
{
    struct outcome *o = ctx;
    int i = job_of(r->id);
    ASSERT_MSG(i >= 0, "replayed an id never written: '%s'", r->id);
    ASSERT_MSG(!o->state[i], "'%s' replayed twice", r->id);
    if (r->finished) {
        ASSERT_MSG(jobs[i].finished, "'%s' replayed finished; it never finished", r->id);
        ASSERT_EQ_U64(r->proof_len, 192);
        for (size_t k = 0; k < 192; k++) ASSERT_EQ_INT(r->proof[k], i);
        o->state[i] = 2;
    } else {
        ASSERT_EQ_U64(r->request_len, jobs[i].req_len);
        ASSERT_MEM_EQ(r->request, jobs[i].req, jobs[i].req_len);
        o->state[i] = 1;
        if (jobs[i].finished) o->undone++;
    }
    return 0;
}

/* Open and replay dir, the log captured; then check the exact accounting (every id written
 * replayed or reported lost: not after an earlier start reported some, which are gone). */
static void start_(const char *dir, struct outcome *o, bool all_accounted)
{
    memset(o, 0, sizeof *o);
    char logp[300];
    snprintf(logp, sizeof logp, "%s.log", dir);
    fflush(stderr);
    int saved = dup(2), lf = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(lf, 2);
    struct journal *j = NULL;
    struct cuzk_error err_s = {0}, *err = &err_s;
    int rc = journal_open(&j, dir, &OPTS, &o->rep, err);
    if (!rc) rc = journal_replay(j, on_record, o, err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(lf);
    FILE *f = fopen(logp, "r");
    ASSERT(f);
    size_t n = fread(o->log, 1, sizeof o->log - 1, f);
    o->log[n] = 0;
    fclose(f);
    unlink(logp);
    ASSERT_MSG(rc == CUZK_OK, "open: %s\nlog:\n%s", err->msg, o->log);
    const struct journal_lost *lost;
    size_t n_lost = journal_lost(j, &lost);
    for (size_t k = 0; k < n_lost; k++) {
        int i = job_of(lost[k].id);
        ASSERT_MSG(i >= 0, "lost an id never written: '%s'", lost[k].id);
        ASSERT_MSG(!o->state[i], "'%s' both replayed and reported lost", lost[k].id);
        ASSERT_EQ_INT(lost[k].finished, jobs[i].finished);
        o->state[i] = 3;
        char quoted[160];
        snprintf(quoted, sizeof quoted, "'%.127s'", lost[k].id);
        ASSERT_MSG(strstr(o->log, quoted), "lost id %s not in the log:\n%s", quoted, o->log);
    }
    o->lost = (unsigned)n_lost;
    for (int i = 0; i < N && all_accounted; i++)
        ASSERT_MSG(o->state[i], "'%s' neither replayed nor reported lost\nlog:\n%s", jobs[i].id,
                   o->log);
    /* found at open (the report's counts) or dropped by its checksum during the replay (each
     * named in a line of its own) */
    unsigned dropped = 0;
    for (const char *p = o->log; (p = strstr(p, "does not match its checksum (garbled on disk)")); p++) dropped++;
    ASSERT_EQ_U64(o->rep.lost_jobs + o->rep.lost_results + dropped, o->lost);
    ASSERT_EQ_U64(o->rep.results_undone, o->undone);
    journal_close(j);
    if (o->rep.lost_jobs + o->rep.lost_results) {
        char head[80];
        snprintf(head, sizeof head, "%u of %d acknowledged job(s) LOST",
                 o->rep.lost_jobs + o->rep.lost_results, N);
        ASSERT_STR_CONTAINS(o->log, head);
    } else if (!o->lost) {
        ASSERT_MSG(!strstr(o->log, "LOST"), "a loss reported where none was:\n%s", o->log);
    }
}

static void start(const char *dir, struct outcome *o) { start_(dir, o, true); }

/* The damage classes that leave journal.db intact lose nothing acknowledged. */
static void expect_nothing_lost(const struct outcome *o)
{
    ASSERT_EQ_U64(o->lost, 0);
    for (int i = 0; i < N; i++) ASSERT(o->state[i] == 1 || o->state[i] == 2);
}

static void copy_dir(const char *from, const char *to)
{
    sh("cp -a '%s/.' '%s/'", from, to);
}

/* ------------------------------------------------------------------ tests -- */

TEST_T(wal_deleted_loses_no_acknowledged_job, 60)
{
    char dir[256], wal[300];
    tmpdir(dir, sizeof dir);
    populate(dir);
    snprintf(wal, sizeof wal, "%s/journal.db-wal", dir);
    ASSERT_MSG(file_size(wal) > 0, "the results should be in the WAL only");
    ASSERT(unlink(wal) == 0);
    struct outcome o;
    start(dir, &o);
    expect_nothing_lost(&o);
    /* every result was in the WAL only: all of them are reported, by id, and proved again */
    ASSERT_EQ_U64(o.undone, (N + FIN_EVERY - 2) / FIN_EVERY);
    for (int i = 0; i < N; i++)
        if (jobs[i].finished) {
            char quoted[160];
            snprintf(quoted, sizeof quoted, "'%.31s'", jobs[i].id);
            ASSERT_STR_CONTAINS(o.log, quoted);
        }
    ASSERT_STR_CONTAINS(o.log, "finished result(s) lost");
    rmrf(dir);
}

TEST_T(wal_cut_at_random_bytes_many_seeds, 120)
{
    char tmpl[256];
    tmpdir(tmpl, sizeof tmpl);
    populate(tmpl);
    char wal[300];
    snprintf(wal, sizeof wal, "%s/journal.db-wal", tmpl);
    off_t size = file_size(wal);
    ASSERT(size > 32);
    for (int seed = 0; seed < 40; seed++) {
        char dir[256];
        tmpdir(dir, sizeof dir);
        copy_dir(tmpl, dir);
        off_t at = (off_t)(cuzk_rng_u64(test_rng()) % (uint64_t)size);
        snprintf(wal, sizeof wal, "%s/journal.db-wal", dir);
        ASSERT(truncate(wal, at) == 0);
        struct outcome o;
        start(dir, &o);
        expect_nothing_lost(&o);
        rmrf(dir);
    }
    rmrf(tmpl);
}

TEST_T(wal_tail_torn_and_byte_flipped, 60)
{
    char tmpl[256], wal[300];
    tmpdir(tmpl, sizeof tmpl);
    populate(tmpl);
    snprintf(wal, sizeof wal, "%s/journal.db-wal", tmpl);
    off_t size = wal_current_end(wal);
    ASSERT(size >= 32 + 3 * (24 + 4096));
    for (int torn = 1; torn >= 0; torn--) {
        char dir[256];
        tmpdir(dir, sizeof dir);
        copy_dir(tmpl, dir);
        snprintf(wal, sizeof wal, "%s/journal.db-wal", dir);
        int fd = open(wal, O_RDWR);
        ASSERT(fd >= 0);
        off_t at;
        if (torn) {   /* within the last frame: the last result's transaction is dropped */
            at = size - 1 - (off_t)(cuzk_rng_u64(test_rng()) % 4000);
            ASSERT(ftruncate(fd, at) == 0);
        } else {      /* a byte in the middle: the transactions from there on are dropped */
            at = 32 + (size - 32) / 2 + (off_t)(cuzk_rng_u64(test_rng()) % 64);
            uint8_t b;
            ASSERT(pread(fd, &b, 1, at) == 1);
            b ^= (uint8_t)(1 + cuzk_rng_u64(test_rng()) % 255);
            ASSERT(pwrite(fd, &b, 1, at) == 1);
        }
        close(fd);
        struct outcome o;
        start(dir, &o);
        ASSERT_MSG(o.rep.wal_damaged, "%s at byte %lld not reported", torn ? "tear" : "flip",
                   (long long)at);
        expect_nothing_lost(&o);
        ASSERT_MSG(o.undone >= 1, "the damaged transaction held a result");
        if (torn) {   /* exactly the last one: the last job that finished */
            ASSERT_EQ_U64(o.undone, 1);
            int last = -1;
            for (int i = 0; i < N; i++) if (jobs[i].finished) last = i;
            ASSERT_EQ_INT(o.state[last], 1);
        }
        rmrf(dir);
    }
    rmrf(tmpl);
}

/* journal.db cut (a full disk, a bad copy): the records past the cut are gone; each is named. */
TEST_T(database_cut_reports_exact_lost_ids, 90)
{
    char tmpl[256], db[300];
    tmpdir(tmpl, sizeof tmpl);
    populate(tmpl);
    snprintf(db, sizeof db, "%s/journal.db", tmpl);
    off_t size = file_size(db);
    ASSERT(size > 8 * 4096);
    unsigned total_lost = 0;
    for (int round = 0; round < 6; round++) {
        char dir[256];
        tmpdir(dir, sizeof dir);
        copy_dir(tmpl, dir);
        snprintf(db, sizeof db, "%s/journal.db", dir);
        /* anywhere past the first pages (schema) */
        off_t at = 3 * 4096 + (off_t)(cuzk_rng_u64(test_rng()) % (uint64_t)(size - 3 * 4096));
        ASSERT(truncate(db, at) == 0);
        struct outcome o;
        start(dir, &o);
        /* the accounting in start() is the check: a cut through the last page can take only
         * bytes of the last record (read back as zeros: its checksum names it) or none */
        total_lost += o.lost;
        /* and the next start has nothing new to report */
        struct outcome o2;
        start_(dir, &o2, false);
        ASSERT_EQ_U64(o2.lost, 0);
        ASSERT(!o2.rep.moved_aside);
        for (int i = 0; i < N; i++) ASSERT_EQ_INT(o2.state[i], o.state[i] == 3 ? 0 : o.state[i]);
        rmrf(dir);
    }
    ASSERT_MSG(total_lost > 0, "no cut lost anything: the test did not test the report");
    rmrf(tmpl);
}

TEST_T(database_deleted_every_job_named, 60)
{
    char dir[256], p[300];
    tmpdir(dir, sizeof dir);
    populate(dir);
    snprintf(p, sizeof p, "%s/journal.db", dir);
    ASSERT(unlink(p) == 0);
    snprintf(p, sizeof p, "%s/journal.db-wal", dir);
    unlink(p);
    struct outcome o;
    start(dir, &o);
    ASSERT_EQ_U64(o.lost, N);
    ASSERT_EQ_U64(o.rep.lost_results, (N + FIN_EVERY - 2) / FIN_EVERY);
    ASSERT_EQ_U64(o.rep.lost_jobs, N - o.rep.lost_results);
    rmrf(dir);
}

/* An id in the id index changed in place (the page stays well formed, the order too): quick_check
 * says ok, integrity_check does not; the file is moved aside and every record read back from the
 * table: nothing is lost. */
TEST_T(index_damage_caught_nothing_lost, 60)
{
    char dir[256], db[300];
    tmpdir(dir, sizeof dir);
    populate(dir);
    snprintf(db, sizeof db, "%s/journal.db", dir);
    sqlite3 *s = NULL;
    ASSERT(sqlite3_open(db, &s) == SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ASSERT(sqlite3_prepare_v2(s, "SELECT rootpage FROM sqlite_master WHERE name = 'jobs_by_id'",
                              -1, &st, NULL) == SQLITE_OK);
    ASSERT(sqlite3_step(st) == SQLITE_ROW);
    int root = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(s);   /* checkpoints the results: the file is what the index test needs */
    ASSERT(root > 1);
    int fd = open(db, O_RDWR);
    uint8_t page[4096];
    ASSERT(pread(fd, page, sizeof page, (off_t)(root - 1) * 4096) == 4096);
    uint8_t *hit = memmem(page, sizeof page, "job-050", 7);
    ASSERT_MSG(hit, "id not found in the index page %d", root);
    hit[6] = '5';   /* "job-055": still between job-050's neighbours job-040 and job-060 */
    ASSERT(pwrite(fd, page, sizeof page, (off_t)(root - 1) * 4096) == 4096);
    close(fd);
    ASSERT(sqlite3_open(db, &s) == SQLITE_OK);
    ASSERT(sqlite3_prepare_v2(s, "PRAGMA quick_check", -1, &st, NULL) == SQLITE_OK);
    ASSERT(sqlite3_step(st) == SQLITE_ROW);
    ASSERT_MSG(!strcmp((const char *)sqlite3_column_text(st, 0), "ok"),
               "quick_check saw it too (%s): the damage is not the one quick_check misses",
               sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(s);
    struct outcome o;
    start(dir, &o);
    ASSERT(o.rep.moved_aside);
    ASSERT_STR_CONTAINS(o.log, "integrity_check");
    ASSERT_EQ_U64(o.undone, 0);   /* the results had been checkpointed by the close above */
    expect_nothing_lost(&o);
    ASSERT_STR_CONTAINS(o.log, "none is lost");
    rmrf(dir);
}

/* The acknowledgement log itself garbled: journal.db is intact, so nothing is lost; the damage
 * is reported and the log rewritten (the next start is quiet). */
TEST_T(ack_log_garbled_reported_nothing_lost, 60)
{
    char dir[256], p[300];
    tmpdir(dir, sizeof dir);
    populate(dir);
    snprintf(p, sizeof p, "%s/journal.acks", dir);
    off_t size = file_size(p);
    ASSERT(size > 100);
    int fd = open(p, O_RDWR);
    off_t at = (off_t)(cuzk_rng_u64(test_rng()) % (uint64_t)size);
    uint8_t b;
    ASSERT(pread(fd, &b, 1, at) == 1);
    b ^= 0x10;
    ASSERT(pwrite(fd, &b, 1, at) == 1);
    close(fd);
    struct outcome o;
    start(dir, &o);
    ASSERT_EQ_U64(o.rep.acks_bad_regions, 1);
    expect_nothing_lost(&o);
    start(dir, &o);
    ASSERT_EQ_U64(o.rep.acks_bad_regions, 0);
    rmrf(dir);
}
/* Records deleted on purpose (discarded, expired by count) are never reported lost, across a
 * process that dies without closing and then the WAL deleted. */
TEST_T(deleted_on_purpose_never_reported_lost, 60)
{
    char dir[256];
    tmpdir(dir, sizeof dir);
    const struct journal_options one = {3600 * 1000, 1};   /* keep one result */
    pid_t pid = fork();
    if (pid == 0) {
        struct journal *j = NULL;
        struct cuzk_error err = {0};
        if (journal_open(&j, dir, &one, NULL, &err)) _exit(2);
        uint64_t tok[6];
        for (int i = 0; i < 6; i++) {
            char id[16];
            snprintf(id, sizeof id, "d%d", i);
            if (journal_stage(j, id, 100, 2, (const uint8_t *)"x", 1, &tok[i], &err)) _exit(3);
        }
        journal_discard(j, tok[5]);
        for (int i = 0; i < 3; i++) {
            struct journal_record r;
            memset(&r, 0, sizeof r);
            r.status = JOURNAL_COMPLETED;
            r.error = "";
            r.finished_at_ms = (uint64_t)time(NULL) * 1000 + (uint64_t)i;
            journal_finish(j, tok[i], &r);
        }
        _exit(0);
    }
    int st;
    ASSERT(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* a start expires two of the three results (count 1) and notes them; it dies too */
    pid = fork();
    if (pid == 0) {
        struct journal *j = NULL;
        struct cuzk_error err = {0};
        struct journal_report rep;
        if (journal_open(&j, dir, &one, &rep, &err)) _exit(2);
        _exit(rep.expired == 2 && rep.lost_jobs == 0 ? 0 : 4);
    }
    ASSERT(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    ASSERT_EQ_INT(WEXITSTATUS(st), 0);
    char wal[300];
    snprintf(wal, sizeof wal, "%s/journal.db-wal", dir);
    unlink(wal);
    struct journal *j = NULL;
    struct cuzk_error err_s = {0}, *err = &err_s;
    struct journal_report rep;
    ASSERT_OK(journal_open(&j, dir, &one, &rep, err), err);
    const struct journal_lost *lost;
    ASSERT_EQ_U64(journal_lost(j, &lost), 0);
    ASSERT_EQ_U64(rep.lost_jobs + rep.lost_results, 0);
    ASSERT_EQ_U64(rep.pending, 2);    /* d3, d4 */
    ASSERT_EQ_U64(rep.finished, 1);   /* d2, the newest result */
    journal_close(j);
    rmrf(dir);
}
#endif
