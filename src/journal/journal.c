/* journal.c: the durable job journal (journal.h): one SQLite database in WAL mode, one table of
 * records (accepted requests until they finish, then their results until the retention drops
 * them), each with a SHA-256 over its content so a garbled record is named and dropped rather
 * than replayed. Why SQLite, WAL and the synchronous levels: docs/decisions.md ("The job
 * journal"). One connection in EXCLUSIVE locking mode (no -shm file: nothing is mmap'd that a
 * full disk could turn into SIGBUS, and no other process can open the journal while it runs)
 * guarded by one mutex. What damage cost is measured at open by journal_audit.c. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <sqlite3.h>

#include "cuzk/journal.h"
#include "cuzk/log.h"
#include "acklog.h"
#include "journal_internal.h"

#define SCHEMA_VERSION 2   /* 2: the aggregate column */
#define CHECKPOINT_BYTES (16ull << 20)   /* the WAL is folded into the database past this */
#define MAINTAIN_EVERY_MS 60000ull       /* retention and vacuum at most this often */

static uint64_t unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

const char *journal_path(const struct journal *j) { return j->path; }

/* ------------------------------------------------------------- checksum -- */

/* SHA-256 over the record's content in a fixed layout (tag, integers as 8 bytes little
 * endian, strings and blobs length-prefixed): what was written is what is replayed. */
struct sum { EVP_MD_CTX *c; };
static void sum_u64(struct sum *s, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
    EVP_DigestUpdate(s->c, b, 8);
}
static void sum_bytes(struct sum *s, const void *p, size_t n)
{
    sum_u64(s, n);
    if (n) EVP_DigestUpdate(s->c, p, n);
}
static bool record_sum(uint8_t out[32], const struct journal_record *r)
{
    struct sum s = {EVP_MD_CTX_new()};
    if (!s.c || !EVP_DigestInit_ex(s.c, EVP_sha256(), NULL)) { EVP_MD_CTX_free(s.c); return false; }
    EVP_DigestUpdate(s.c, "cuzk-journal-record-v1", 22);
    sum_bytes(&s, r->id, strlen(r->id));
    sum_u64(&s, (uint64_t)(int64_t)r->kind);
    sum_u64(&s, (uint64_t)(int64_t)r->priority);
    sum_u64(&s, r->accepted_at_ms);
    sum_u64(&s, r->finished);
    if (!r->finished) {
        sum_bytes(&s, r->request, r->request_len);
    } else {
        sum_u64(&s, (uint64_t)(int64_t)r->status);
        sum_bytes(&s, r->error ? r->error : "", r->error ? strlen(r->error) : 0);
        sum_bytes(&s, r->proof, r->proof_len);
        /* only when present: the sums of version-1 records (no aggregate) stay valid */
        if (r->aggregate_len) sum_bytes(&s, r->aggregate, r->aggregate_len);
        sum_u64(&s, r->queue_wait_ms);
        sum_u64(&s, r->srs_load_ms);
        sum_u64(&s, r->synthesis_ms);
        sum_u64(&s, r->gpu_compute_ms);
        sum_u64(&s, r->total_ms);
        sum_u64(&s, r->finished_at_ms);
    }
    unsigned n = 0;
    bool ok = EVP_DigestFinal_ex(s.c, out, &n) && n == 32;
    EVP_MD_CTX_free(s.c);
    return ok;
}

/* ------------------------------------------------------------ SQLite plumbing -- */

static int fail_db(const struct journal *j, sqlite3 *db, int rc, struct cuzk_error *err,
                   const char *what)
{
    int base = rc & 0xff;
    const char *m = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if (base == SQLITE_FULL)
        return cuzk_fail(err, CUZK_E_NOMEM, "journal %s: %s: disk full (%s)", j->path, what, m);
    if (base == SQLITE_TOOBIG)
        return cuzk_fail(err, CUZK_E_NOMEM, "journal %s: %s: larger than SQLite stores in one "
                         "record (%d bytes; lower [daemon] max_message_size)", j->path, what,
                         sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1));
    if (base == SQLITE_IOERR)
        return cuzk_fail(err, CUZK_E_NOMEM, "journal %s: %s: I/O error (%s; extended code %d)",
                         j->path, what, m, rc);
    return cuzk_fail(err, CUZK_E_IO, "journal %s: %s: %s", j->path, what, m);
}

static bool is_corrupt(int rc)
{
    return (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB;
}

/* After a failed statement: a transaction SQLite left open is rolled back. */
static void rollback_if_open(sqlite3 *db)
{
    if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

static int exec1(sqlite3 *db, const char *sql) { return sqlite3_exec(db, sql, NULL, NULL, NULL); }

static const char SCHEMA[] =
    "CREATE TABLE IF NOT EXISTS jobs("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"   /* accept order, never reused */
    " id TEXT NOT NULL,"
    " kind INTEGER NOT NULL,"
    " priority INTEGER NOT NULL,"
    " finished INTEGER NOT NULL DEFAULT 0,"
    " request BLOB,"                            /* until finished */
    " status INTEGER NOT NULL DEFAULT 0,"
    " error TEXT NOT NULL DEFAULT '',"
    " proof BLOB,"
    " t_queue INTEGER NOT NULL DEFAULT 0, t_srs INTEGER NOT NULL DEFAULT 0,"
    " t_synth INTEGER NOT NULL DEFAULT 0, t_gpu INTEGER NOT NULL DEFAULT 0,"
    " t_total INTEGER NOT NULL DEFAULT 0,"
    " accepted_at INTEGER NOT NULL,"
    " finished_at INTEGER NOT NULL DEFAULT 0,"
    " sum BLOB NOT NULL);"
    "CREATE INDEX IF NOT EXISTS jobs_by_id ON jobs(id);"
    "CREATE INDEX IF NOT EXISTS jobs_finished ON jobs(finished, finished_at);";

#define COLS "seq, id, kind, priority, finished, request, status, error, proof, t_queue, t_srs, " \
             "t_synth, t_gpu, t_total, accepted_at, finished_at, sum, aggregate"

/* Open and configure the database at path. Returns an SQLite code (SQLITE_CORRUPT /
 * SQLITE_NOTADB: the file is damaged; *msg says how). */
static int db_open(sqlite3 **out, const char *path, bool check, char *msg, size_t cap)
{
    sqlite3 *db = NULL;
    *out = NULL;
    msg[0] = 0;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                             SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK) sqlite3_extended_result_codes(db, 1);
    /* EXCLUSIVE before WAL: the wal-index then lives in heap memory, not in a -shm file */
    if (rc == SQLITE_OK) rc = exec1(db, "PRAGMA locking_mode=EXCLUSIVE");
    if (rc == SQLITE_OK) rc = exec1(db, "PRAGMA auto_vacuum=INCREMENTAL");   /* new files */
    sqlite3_stmt *st = NULL;
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            const char *mode = (const char *)sqlite3_column_text(st, 0);
            rc = mode && !strcmp(mode, "wal") ? SQLITE_OK : SQLITE_ERROR;
            if (rc) snprintf(msg, cap, "cannot switch to WAL mode (got %s)", mode ? mode : "?");
        }
        sqlite3_finalize(st);
        st = NULL;
    }
    /* NORMAL: a commit is not fsync'd; what makes a request durable is the checkpoint that
     * journal_stage runs before it returns (it fsyncs the WAL, then journal.db). The level is
     * set once here: a PRAGMA synchronous takes effect when it is prepared, not when it runs,
     * so prepared statements cannot switch it back and forth. */
    if (rc == SQLITE_OK) rc = exec1(db, "PRAGMA synchronous=NORMAL");
    /* a large request leaves a WAL as large; cut it back after the checkpoint that empties it */
    if (rc == SQLITE_OK) rc = exec1(db, "PRAGMA journal_size_limit=4194304");
    /* checkpoints are run by journal_stage, outside the engine's lock (never by a commit) */
    if (rc == SQLITE_OK) rc = exec1(db, "PRAGMA wal_autocheckpoint=0");
    int version = 0;
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        if ((rc = sqlite3_step(st)) == SQLITE_ROW) { version = sqlite3_column_int(st, 0); rc = SQLITE_OK; }
        sqlite3_finalize(st);
        st = NULL;
    }
    if (rc == SQLITE_OK && version > SCHEMA_VERSION) {
        snprintf(msg, cap, "written by a newer cuzk (schema version %d; this one knows %d)",
                 version, SCHEMA_VERSION);
        rc = SQLITE_MISMATCH;
    }
    if (rc == SQLITE_OK) rc = exec1(db, SCHEMA);
    /* version 2 added the aggregate column (a new file gets it here too) */
    if (rc == SQLITE_OK && version < 2) rc = exec1(db, "ALTER TABLE jobs ADD COLUMN aggregate BLOB");
    if (rc == SQLITE_OK && version < SCHEMA_VERSION) rc = exec1(db, "PRAGMA user_version=2");
    if (rc == SQLITE_OK && check) {
        /* SQLite checksums WAL frames but not database pages: look at every page once, and
         * at every index entry against its row (quick_check skips that: a damaged index
         * answers lookups by id wrongly while the table reads fine) */
        rc = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL);
        if (rc == SQLITE_OK) {
            rc = sqlite3_step(st);
            if (rc == SQLITE_ROW) {
                const char *res = (const char *)sqlite3_column_text(st, 0);
                if (res && strcmp(res, "ok")) {
                    snprintf(msg, cap, "integrity_check: %s", res);
                    rc = SQLITE_CORRUPT;
                } else {
                    rc = SQLITE_OK;
                }
            }
            sqlite3_finalize(st);
        }
    }
    if (rc != SQLITE_OK) {
        if (!msg[0]) snprintf(msg, cap, "%s", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return rc;
    }
    *out = db;
    return SQLITE_OK;
}

static int prepare_all(struct journal *j)
{
    int rc = sqlite3_prepare_v2(j->db,
        "INSERT INTO jobs(id, kind, priority, finished, request, accepted_at, sum) "
        "VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6)", -1, &j->st_insert, NULL);
    if (!rc) rc = sqlite3_prepare_v2(j->db,
        "UPDATE jobs SET finished = 1, request = NULL, status = ?2, error = ?3, proof = ?4, "
        "t_queue = ?5, t_srs = ?6, t_synth = ?7, t_gpu = ?8, t_total = ?9, finished_at = ?10, "
        "sum = ?11, aggregate = ?12 WHERE seq = ?1 AND finished = 0", -1, &j->st_finish, NULL);
    if (!rc) rc = sqlite3_prepare_v2(j->db,
        "SELECT id, kind, priority, accepted_at FROM jobs WHERE seq = ?1 AND finished = 0", -1,
        &j->st_get, NULL);
    if (!rc) rc = sqlite3_prepare_v2(j->db, "DELETE FROM jobs WHERE seq = ?1 AND finished = 0",
                                     -1, &j->st_discard, NULL);
    return rc;
}

static void run_stmt(sqlite3_stmt *st)
{
    while (sqlite3_step(st) == SQLITE_ROW) {}
    sqlite3_reset(st);
}

/* Fill r from a row of SELECT COLS (pointers into the statement's current row). */
static void row_record(sqlite3_stmt *st, struct journal_record *r, const uint8_t **sum,
                       int *sum_len)
{
    memset(r, 0, sizeof *r);
    r->seq = (uint64_t)sqlite3_column_int64(st, 0);
    const char *id = (const char *)sqlite3_column_text(st, 1);
    snprintf(r->id, sizeof r->id, "%s", id ? id : "");
    r->kind = sqlite3_column_int(st, 2);
    r->priority = sqlite3_column_int(st, 3);
    r->finished = sqlite3_column_int(st, 4) != 0;
    r->request = sqlite3_column_blob(st, 5);
    r->request_len = (size_t)sqlite3_column_bytes(st, 5);
    r->status = sqlite3_column_int(st, 6);
    r->error = (const char *)sqlite3_column_text(st, 7);
    if (!r->error) r->error = "";
    r->proof = sqlite3_column_blob(st, 8);
    r->proof_len = (size_t)sqlite3_column_bytes(st, 8);
    r->queue_wait_ms = (uint64_t)sqlite3_column_int64(st, 9);
    r->srs_load_ms = (uint64_t)sqlite3_column_int64(st, 10);
    r->synthesis_ms = (uint64_t)sqlite3_column_int64(st, 11);
    r->gpu_compute_ms = (uint64_t)sqlite3_column_int64(st, 12);
    r->total_ms = (uint64_t)sqlite3_column_int64(st, 13);
    r->accepted_at_ms = (uint64_t)sqlite3_column_int64(st, 14);
    r->finished_at_ms = (uint64_t)sqlite3_column_int64(st, 15);
    *sum = sqlite3_column_blob(st, 16);
    *sum_len = sqlite3_column_bytes(st, 16);
    r->aggregate = sqlite3_column_blob(st, 17);
    r->aggregate_len = (size_t)sqlite3_column_bytes(st, 17);
}

/* Whether the record matches the checksum stored with it. A record whose id was cut (longer
 * than an id can be) cannot match either. */
static bool row_ok(sqlite3_stmt *st, const struct journal_record *r, const uint8_t *sum, int n)
{
    uint8_t want[32];
    if (n != 32 || !sum) return false;
    if ((size_t)sqlite3_column_bytes(st, 1) >= JOURNAL_ID_MAX) return false;
    return record_sum(want, r) && !memcmp(want, sum, 32);
}

/* ---------------------------------------------------------- maintenance -- */

/* Fold the write-ahead log into journal.db and empty it (mu held). The acknowledgement log is
 * made durable first: a deletion reaches journal.db only through a checkpoint, so every
 * deletion journal.db shows has its 'D' entry on disk (acklog.h). Returns an SQLite code. */
static int checkpoint(struct journal *j)
{
    int e = j->acks ? acks_sync(j->acks) : 0;   /* none yet: at open, before it is written */
    if (e)
        cuzk_log(CLOG_WARN, "journal %s: cannot sync %s: %s", j->path, j->acks_path, strerror(e));
    /* PASSIVE, not TRUNCATE: no other connection exists (EXCLUSIVE), so it copies every frame;
     * the next transaction then rewrites the WAL from its start in place, which spares the
     * truncation and its fsync on every request */
    int n_log = 0, n_done = 0;
    int rc = sqlite3_wal_checkpoint_v2(j->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &n_log, &n_done);
    return rc == SQLITE_OK && n_log != n_done ? SQLITE_BUSY : rc;
}

/* Note a record deleted on purpose in the acknowledgement log, before the deletion runs
 * (mu held; sync: make it durable now). */
static void note_deleted(struct journal *j, uint64_t seq, const char *id, bool sync)
{
    int e = acks_append(j->acks, 'D', seq, id, sync);
    if (e)
        cuzk_log(CLOG_WARN, "journal %s: cannot note the deletion of record %" PRIu64 " in %s: "
                 "%s (the next start may report job '%s' lost although it was deleted on "
                 "purpose)", j->path, seq, j->acks_path, strerror(e), id);
}

#define EXPIRED_WHERE "finished = 1 AND (finished_at < ?1 OR seq NOT IN (SELECT seq FROM jobs " \
    "WHERE finished = 1 ORDER BY finished_at DESC, seq DESC LIMIT ?2))"

/* Results past the retention go (noted in the acknowledgement log first); free pages go back
 * to the file system; the acknowledgement log is rewritten when it has grown (mu held). */
static void maintain(struct journal *j, bool force, unsigned *expired)
{
    uint64_t now = unix_ms();
    struct stat st;
    if (stat(j->wal, &st) == 0 && (uint64_t)st.st_size > CHECKPOINT_BYTES) checkpoint(j);
    if (!force && now - j->last_maintain_ms < MAINTAIN_EVERY_MS) return;
    j->last_maintain_ms = now;
    sqlite3_stmt *sel = NULL, *del = NULL;
    int n = 0;
    sqlite3_int64 before = (sqlite3_int64)(now > j->opt.retention_ms ? now - j->opt.retention_ms : 0);
    if (!sqlite3_prepare_v2(j->db, "SELECT seq, id FROM jobs WHERE " EXPIRED_WHERE, -1, &sel, NULL) &&
        !sqlite3_prepare_v2(j->db, "DELETE FROM jobs WHERE " EXPIRED_WHERE, -1, &del, NULL)) {
        sqlite3_bind_int64(sel, 1, before);
        sqlite3_bind_int64(sel, 2, (sqlite3_int64)j->opt.retention_count);
        unsigned noted = 0;
        while (sqlite3_step(sel) == SQLITE_ROW) {
            const char *id = (const char *)sqlite3_column_text(sel, 1);
            note_deleted(j, (uint64_t)sqlite3_column_int64(sel, 0), id ? id : "", false);
            noted++;
        }
        if (noted) acks_sync(j->acks);
        sqlite3_bind_int64(del, 1, before);
        sqlite3_bind_int64(del, 2, (sqlite3_int64)j->opt.retention_count);
        if (sqlite3_step(del) == SQLITE_DONE) n += sqlite3_changes(j->db);
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(del);
    rollback_if_open(j->db);
    if (expired) *expired += (unsigned)n;
    exec1(j->db, "PRAGMA incremental_vacuum");
    /* the log holds an entry per event; rewritten from the records once it is mostly history */
    if (j->acks && acks_grown(j->acks) > (64u << 10) + 2 * acks_base(j->acks) &&
        checkpoint(j) == SQLITE_OK) {
        int e = acks_rewrite(&j->acks, j->acks_path, j->db);
        if (e)
            cuzk_log(CLOG_WARN, "journal %s: cannot rewrite %s: %s (appending goes on)", j->path,
                     j->acks_path, strerror(e));
    }
}

/* ----------------------------------------------------------------- results -- */

/* Write one result (mu held). Not fsync'd: see journal_finish. */
static void do_finish(struct journal *j, uint64_t token, const struct journal_record *in)
{
    struct journal_record r = *in;
    r.finished = true;
    sqlite3_bind_int64(j->st_get, 1, (sqlite3_int64)token);
    int rc = sqlite3_step(j->st_get);
    if (rc != SQLITE_ROW) {
        sqlite3_reset(j->st_get);
        if (rc != SQLITE_DONE)
            cuzk_log(CLOG_WARN, "journal %s: cannot read record %" PRIu64 " (job %s) to write its "
                     "result: %s; after a restart it is proved again", j->path, token, in->id,
                     sqlite3_errmsg(j->db));
        /* SQLITE_DONE: no unfinished record (discarded, or finished already): nothing to do */
        return;
    }
    const char *id = (const char *)sqlite3_column_text(j->st_get, 0);
    snprintf(r.id, sizeof r.id, "%s", id ? id : "");
    r.kind = sqlite3_column_int(j->st_get, 1);
    r.priority = sqlite3_column_int(j->st_get, 2);
    r.accepted_at_ms = (uint64_t)sqlite3_column_int64(j->st_get, 3);
    sqlite3_reset(j->st_get);
    uint8_t sum[32];
    if (!record_sum(sum, &r)) {
        cuzk_log(CLOG_WARN, "journal %s: cannot checksum the result of job %s (out of memory); "
                 "after a restart it is proved again", j->path, r.id);
        return;
    }
    sqlite3_stmt *u = j->st_finish;
    sqlite3_bind_int64(u, 1, (sqlite3_int64)token);
    sqlite3_bind_int(u, 2, r.status);
    sqlite3_bind_text(u, 3, r.error ? r.error : "", -1, SQLITE_STATIC);
    if (r.proof_len) sqlite3_bind_blob64(u, 4, r.proof, r.proof_len, SQLITE_STATIC);
    else sqlite3_bind_null(u, 4);
    sqlite3_bind_int64(u, 5, (sqlite3_int64)r.queue_wait_ms);
    sqlite3_bind_int64(u, 6, (sqlite3_int64)r.srs_load_ms);
    sqlite3_bind_int64(u, 7, (sqlite3_int64)r.synthesis_ms);
    sqlite3_bind_int64(u, 8, (sqlite3_int64)r.gpu_compute_ms);
    sqlite3_bind_int64(u, 9, (sqlite3_int64)r.total_ms);
    sqlite3_bind_int64(u, 10, (sqlite3_int64)r.finished_at_ms);
    sqlite3_bind_blob(u, 11, sum, 32, SQLITE_STATIC);
    if (r.aggregate_len) sqlite3_bind_blob64(u, 12, r.aggregate, r.aggregate_len, SQLITE_STATIC);
    else sqlite3_bind_null(u, 12);
    rc = sqlite3_step(u);
    sqlite3_reset(u);
    sqlite3_clear_bindings(u);
    /* not synced: made durable with the next checkpoint, which is what makes the result durable
     * in journal.db (an 'F' whose result a lost WAL took is how the next start can say so) */
    if (rc == SQLITE_DONE) acks_append(j->acks, 'F', token, r.id, false);
    if (rc != SQLITE_DONE) {
        rollback_if_open(j->db);
        cuzk_log(CLOG_WARN, "journal %s: cannot write the result of job %s: %s; it is answered "
                 "now, but after a restart it would be proved again", j->path, r.id,
                 sqlite3_errmsg(j->db));
    }
}

/* Take the journal (blocking). */
static void jr_lock(struct journal *j) { pthread_mutex_lock(&j->mu); }

static struct pending_finish *q_pop(struct journal *j)
{
    pthread_mutex_lock(&j->qmu);
    struct pending_finish *p = j->q_head;
    if (p) {
        j->q_head = p->next;
        if (!j->q_head) j->q_tail = NULL;
    }
    pthread_mutex_unlock(&j->qmu);
    return p;
}

/* Release the journal, writing first the results queued while it was held; a result queued
 * just after the unlock is written by whichever thread takes it next (see journal_finish). */
static void jr_release(struct journal *j)
{
    for (;;) {
        for (struct pending_finish *p; (p = q_pop(j));) {
            do_finish(j, p->token, &p->r);
            free(p);
        }
        pthread_mutex_unlock(&j->mu);
        pthread_mutex_lock(&j->qmu);
        bool more = j->q_head != NULL;
        pthread_mutex_unlock(&j->qmu);
        if (!more || pthread_mutex_trylock(&j->mu) != 0) return;
    }
}

void journal_finish(struct journal *j, uint64_t token, const struct journal_record *r)
{
    if (!j) return;
    /* The engine calls this with its own lock held: it must not wait for a long write
     * (a 50 MB request being staged). When the journal is busy the result is queued and
     * the holder writes it before it lets go. */
    if (pthread_mutex_trylock(&j->mu) == 0) {
        do_finish(j, token, r);
        jr_release(j);
        return;
    }
    size_t el = r->error ? strlen(r->error) + 1 : 1;
    struct pending_finish *p = malloc(sizeof *p + el + r->proof_len + r->aggregate_len);
    if (!p) {
        cuzk_log(CLOG_WARN, "journal %s: out of memory queueing the result of job %s; after a "
                 "restart it is proved again", j->path, r->id);
        return;
    }
    p->next = NULL;
    p->token = token;
    p->r = *r;
    char *e = (char *)(p + 1);
    memcpy(e, r->error ? r->error : "", el);
    p->r.error = e;
    if (r->proof_len) memcpy(e + el, r->proof, r->proof_len);
    p->r.proof = r->proof_len ? (const uint8_t *)(e + el) : NULL;
    if (r->aggregate_len) memcpy(e + el + r->proof_len, r->aggregate, r->aggregate_len);
    p->r.aggregate = r->aggregate_len ? (const uint8_t *)(e + el + r->proof_len) : NULL;
    p->r.request = NULL;
    p->r.request_len = 0;
    pthread_mutex_lock(&j->qmu);
    if (j->q_tail) j->q_tail->next = p; else j->q_head = p;
    j->q_tail = p;
    pthread_mutex_unlock(&j->qmu);
    if (pthread_mutex_trylock(&j->mu) == 0) jr_release(j);   /* the holder may just have left */
}

/* ------------------------------------------------------------------ requests -- */

int journal_stage(struct journal *j, const char *id, int kind, int priority,
                  const uint8_t *request, size_t request_len, uint64_t *token,
                  struct cuzk_error *err)
{
    *token = 0;
    if (strlen(id) >= JOURNAL_ID_MAX)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "journal: id is %zu bytes; the limit is %d",
                         strlen(id), JOURNAL_ID_MAX - 1);
    struct journal_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "%s", id);
    r.kind = kind;
    r.priority = priority;
    r.request = request;
    r.request_len = request_len;
    r.accepted_at_ms = unix_ms();
    uint8_t sum[32];
    if (!record_sum(sum, &r)) return cuzk_fail(err, CUZK_E_NOMEM, "journal: out of memory");
    jr_lock(j);
    sqlite3_stmt *s = j->st_insert;
    sqlite3_bind_text(s, 1, r.id, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, kind);
    sqlite3_bind_int(s, 3, priority);
    /* a zero-length blob, not NULL: a pending record always has its request */
    sqlite3_bind_blob64(s, 4, request_len ? (const void *)request : "", request_len, SQLITE_STATIC);
    sqlite3_bind_int64(s, 5, (sqlite3_int64)r.accepted_at_ms);
    sqlite3_bind_blob(s, 6, sum, 32, SQLITE_STATIC);
    int rc = sqlite3_step(s);   /* in the WAL, not yet fsync'd (the checkpoint below does) */
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    int out = CUZK_OK;
    if (rc != SQLITE_DONE) {
        rollback_if_open(j->db);
        out = fail_db(j, j->db, rc, err, "cannot record the request");
        cuzk_fail_prefix(err, out, "not accepted");
    } else {
        uint64_t seq = (uint64_t)sqlite3_last_insert_rowid(j->db);
        /* Before it is acknowledged: the checkpoint puts it into journal.db (fsync'd), then
         * the acknowledgement log names it (fsync'd), so no single damaged file can take it
         * and a start that finds it missing can say so (docs/decisions.md). */
        const char *what = "fold the write-ahead log into the database";
        rc = checkpoint(j);
        int e = 0;
        if (rc == SQLITE_OK) {
            what = "note the request in the acknowledgement log";
            e = acks_append(j->acks, 'A', seq, r.id, true);
        }
        if (rc != SQLITE_OK || e) {
            char why[300];
            snprintf(why, sizeof why, "%s", rc != SQLITE_OK ? sqlite3_errmsg(j->db) : strerror(e));
            sqlite3_bind_int64(j->st_discard, 1, (sqlite3_int64)seq);
            run_stmt(j->st_discard);
            bool full = (rc & 0xff) == SQLITE_FULL || (rc & 0xff) == SQLITE_IOERR || e == ENOSPC;
            out = cuzk_fail(err, full ? CUZK_E_NOMEM : CUZK_E_IO, "not accepted: journal %s: "
                            "cannot %s: %s", j->path, what, why);
        } else {
            *token = seq;
            maintain(j, false, NULL);
        }
    }
    jr_release(j);
    return out;
}

void journal_discard(struct journal *j, uint64_t token)
{
    if (!j || !token) return;
    jr_lock(j);
    sqlite3_bind_int64(j->st_get, 1, (sqlite3_int64)token);
    if (sqlite3_step(j->st_get) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(j->st_get, 0);
        note_deleted(j, token, id ? id : "", true);
    }
    sqlite3_reset(j->st_get);
    sqlite3_bind_int64(j->st_discard, 1, (sqlite3_int64)token);
    int rc = sqlite3_step(j->st_discard);
    sqlite3_reset(j->st_discard);
    if (rc != SQLITE_DONE) {
        rollback_if_open(j->db);
        cuzk_log(CLOG_WARN, "journal %s: cannot delete record %" PRIu64 " of a request that was "
                 "not accepted: %s (it is replayed at the next start)", j->path, token,
                 sqlite3_errmsg(j->db));
    }
    jr_release(j);
}

/* ---------------------------------------------------------------- replay -- */

int journal_replay(struct journal *j, journal_replay_fn fn, void *ctx, struct cuzk_error *err)
{
    jr_lock(j);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(j->db, "SELECT " COLS " FROM jobs ORDER BY seq", -1, &st, NULL);
    if (rc) {
        int out = fail_db(j, j->db, rc, err, "cannot read the records");
        jr_release(j);
        return out;
    }
    uint64_t *bad = NULL;
    size_t n_bad = 0, cap_bad = 0;
    int out = CUZK_OK;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct journal_record r;
        const uint8_t *sum;
        int sum_len;
        row_record(st, &r, &sum, &sum_len);
        if (!row_ok(st, &r, sum, sum_len)) {
            cuzk_log(CLOG_WARN, "journal %s: record %" PRIu64 " (job '%s', %s) does not match its "
                     "checksum (garbled on disk); dropped: %s", j->path, r.seq, r.id,
                     r.finished ? "finished" : "unfinished",
                     r.finished ? "its result is lost; AwaitProof for it answers NOT_FOUND saying "
                                  "the journal lost it"
                                : "the job is lost; AwaitProof for it answers NOT_FOUND saying "
                                  "the journal lost it; its client must resubmit it");
            if (n_bad == cap_bad) {
                size_t nc = cap_bad ? 2 * cap_bad : 16;
                uint64_t *nb = realloc(bad, nc * sizeof *nb);
                if (nb) { bad = nb; cap_bad = nc; }
            }
            if (n_bad < cap_bad) bad[n_bad++] = r.seq;
            journal_audit_lost_add(j, r.seq, r.id, r.finished);
            note_deleted(j, r.seq, r.id, true);
            continue;
        }
        if ((out = fn(ctx, &r)) != 0) break;
    }
    if (!out && rc != SQLITE_DONE) {
        /* integrity_check passed at open, so this is new damage or an I/O error: what was read
         * has been replayed; the rest stays on disk for the next start */
        cuzk_log(CLOG_WARN, "journal %s: reading the records stopped early: %s; the records "
                 "after the last one replayed are kept for the next start", j->path,
                 sqlite3_errmsg(j->db));
    }
    sqlite3_finalize(st);
    for (size_t i = 0; i < n_bad; i++) {
        sqlite3_stmt *d = NULL;
        if (!sqlite3_prepare_v2(j->db, "DELETE FROM jobs WHERE seq = ?1", -1, &d, NULL)) {
            sqlite3_bind_int64(d, 1, (sqlite3_int64)bad[i]);
            sqlite3_step(d);
        }
        sqlite3_finalize(d);
    }
    free(bad);
    free(j->acks_read.e);   /* journal_audit_lost_add has used it for the last time */
    memset(&j->acks_read, 0, sizeof j->acks_read);
    jr_release(j);
    if (out && err && !err->msg[0]) cuzk_fail(err, out, "journal replay stopped (code %d)", out);
    return out;
}

/* -------------------------------------------------------------- open/close -- */

static int mkdir_p(const char *dir, struct cuzk_error *err)
{
    char p[512];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "state_dir %s: path longer than %zu bytes", dir,
                         sizeof p - 1);
    for (char *c = p + 1; *c; c++) {
        if (*c != '/') continue;
        *c = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return cuzk_fail(err, CUZK_E_IO, "state_dir %s: cannot create %s: %s", dir, p,
                             strerror(errno));
        *c = '/';
    }
    if (mkdir(p, 0750) != 0 && errno != EEXIST)
        return cuzk_fail(err, CUZK_E_IO, "state_dir %s: cannot create it: %s", dir, strerror(errno));
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
        return cuzk_fail(err, CUZK_E_IO, "state_dir %s: not a directory", dir);
    return CUZK_OK;
}

static int take_lock(struct journal *j, struct cuzk_error *err)
{
    int f = open(j->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
    if (f < 0)
        return cuzk_fail(err, CUZK_E_IO, "journal: cannot open %s: %s", j->lock, strerror(errno));
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char buf[32] = {0};
        ssize_t n = pread(f, buf, sizeof buf - 1, 0);
        close(f);
        long pid = n > 0 ? strtol(buf, NULL, 10) : 0;
        if (e == EWOULDBLOCK && pid > 0)
            return cuzk_fail(err, CUZK_E_BUSY, "journal %s is in use by another process (pid %ld; "
                             "two daemons cannot share a [daemon] state_dir)", j->dir, pid);
        if (e == EWOULDBLOCK)
            return cuzk_fail(err, CUZK_E_BUSY, "journal %s is in use by another process (two "
                             "daemons cannot share a [daemon] state_dir)", j->dir);
        return cuzk_fail(err, CUZK_E_IO, "journal: cannot lock %s: %s", j->lock, strerror(e));
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(f, 0) != 0 || pwrite(f, pid, (size_t)n, 0) != n) { /* informative only */ }
    j->lock_fd = f;
    return CUZK_OK;
}

/* Copy the readable, intact records of the moved-aside database into the fresh one. */
static void salvage(struct journal *j, const char *aside, struct journal_report *rep)
{
    sqlite3 *old = NULL;
    int rc = sqlite3_open_v2(aside, &old, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK) rc = exec1(old, "PRAGMA locking_mode=EXCLUSIVE");
    /* a version-1 file has no aggregate column yet (fails harmlessly when it has) */
    if (rc == SQLITE_OK) exec1(old, "ALTER TABLE jobs ADD COLUMN aggregate BLOB");
    sqlite3_stmt *st = NULL, *ins = NULL;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(old, "SELECT " COLS " FROM jobs ORDER BY seq", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(j->db, "INSERT OR IGNORE INTO jobs(" COLS ") VALUES (?1, ?2, ?3, "
                                "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
                                -1, &ins, NULL);
    if (rc != SQLITE_OK) {
        rep->salvage_incomplete = true;
        cuzk_log(CLOG_WARN, "journal %s: nothing could be read from the damaged file %s (%s): "
                 "every job it held is lost; AwaitProof for them answers NOT_FOUND and their "
                 "clients must resubmit them (the same request id starts them anew)", j->path,
                 aside, old ? sqlite3_errmsg(old) : sqlite3_errstr(rc));
        sqlite3_finalize(st);
        sqlite3_finalize(ins);
        sqlite3_close(old);
        return;
    }
    exec1(j->db, "BEGIN");
    uint64_t last = 0;
    char last_id[JOURNAL_ID_MAX] = "";
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct journal_record r;
        const uint8_t *sum;
        int sum_len;
        row_record(st, &r, &sum, &sum_len);
        if (!row_ok(st, &r, sum, sum_len)) {
            rep->bad_checksum++;
            cuzk_log(CLOG_WARN, "journal %s: record %" PRIu64 " (job '%s') of the damaged file "
                     "does not match its checksum; dropped", j->path, r.seq, r.id);
            continue;
        }
        for (int c = 0; c < 18; c++) sqlite3_bind_value(ins, c + 1, sqlite3_column_value(st, c));
        if (sqlite3_step(ins) == SQLITE_DONE) {
            rep->salvaged++;
            last = r.seq;
            snprintf(last_id, sizeof last_id, "%s", r.id);
        }
        sqlite3_reset(ins);
    }
    if (rc != SQLITE_DONE) {
        rep->salvage_incomplete = true;
        char lost[1024], why[200];
        snprintf(why, sizeof why, "%s", sqlite3_errmsg(old));
        journal_audit_index_ids(old, last, lost, sizeof lost);
        cuzk_log(CLOG_WARN, "journal %s: the damaged file %s could be read up to record %" PRIu64
                 " (job '%s') only: %s; the records after it are lost (AwaitProof for them "
                 "answers NOT_FOUND; their clients must resubmit them): %s", j->path, aside,
                 last, last_id[0] ? last_id : "-", why, lost);
    }
    exec1(j->db, "COMMIT");
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    sqlite3_close(old);
}

static void journal_free(struct journal *j)
{
    sqlite3_finalize(j->st_insert);
    sqlite3_finalize(j->st_finish);
    sqlite3_finalize(j->st_get);
    sqlite3_finalize(j->st_discard);
    if (j->db) sqlite3_close(j->db);
    if (j->lock_fd >= 0) close(j->lock_fd);
    acks_close(j->acks);
    free(j->acks_read.e);
    free(j->lost);
    pthread_mutex_destroy(&j->mu);
    pthread_mutex_destroy(&j->qmu);
    free(j);
}

static unsigned count_where(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    unsigned n = 0;
    if (!sqlite3_prepare_v2(db, sql, -1, &st, NULL) && sqlite3_step(st) == SQLITE_ROW)
        n = (unsigned)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

int journal_open(struct journal **out, const char *dir, const struct journal_options *o,
                 struct journal_report *report, struct cuzk_error *err)
{
    struct journal_report local;
    struct journal_report *rep = report ? report : &local;
    memset(rep, 0, sizeof *rep);
    *out = NULL;
    int rc = mkdir_p(dir, err);
    if (rc) return rc;
    struct journal *j = calloc(1, sizeof *j);
    if (!j) return cuzk_fail(err, CUZK_E_NOMEM, "journal: out of memory");
    pthread_mutex_init(&j->mu, NULL);
    pthread_mutex_init(&j->qmu, NULL);
    j->lock_fd = -1;
    j->opt = *o;
    snprintf(j->dir, sizeof j->dir, "%s", dir);
    snprintf(j->path, sizeof j->path, "%s/%s", dir, JOURNAL_FILE);
    snprintf(j->wal, sizeof j->wal, "%s-wal", j->path);
    snprintf(j->lock, sizeof j->lock, "%s/journal.lock", dir);
    snprintf(j->acks_path, sizeof j->acks_path, "%s/%s", dir, ACKS_FILE);
    if ((rc = take_lock(j, err))) { journal_free(j); return rc; }
    int e = acks_load(j->acks_path, &j->acks_read);
    if (e)
        cuzk_log(CLOG_WARN, "journal %s: cannot read %s: %s; what was acknowledged cannot be "
                 "compared with what the journal holds at this start", j->path, j->acks_path,
                 strerror(e));

    struct stat st;
    rep->created = stat(j->path, &st) != 0;
    if (!rep->created) journal_audit_wal(j, rep);

    char msg[400];
    rc = db_open(&j->db, j->path, !rep->created, msg, sizeof msg);
    if (is_corrupt(rc)) {
        /* keep the damaged file for inspection, start a fresh journal, copy what can be read */
        snprintf(rep->aside_path, sizeof rep->aside_path, "%s.corrupt-%" PRIu64, j->path,
                 unix_ms() / 1000);
        char aside_wal[620], shm[620];
        snprintf(aside_wal, sizeof aside_wal, "%s-wal", rep->aside_path);
        snprintf(shm, sizeof shm, "%s-shm", j->path);
        bool moved = rename(j->path, rep->aside_path) == 0;
        if (moved) {
            rename(j->wal, aside_wal);
            unlink(shm);
        }
        cuzk_log(CLOG_WARN, "journal %s is damaged (%s); %s; starting a fresh journal and "
                 "copying the records that can still be read", j->path, msg,
                 moved ? "moved aside" : "could not move it aside");
        if (!moved) {
            cuzk_fail(err, CUZK_E_IO, "journal %s is damaged (%s) and cannot be moved aside to "
                      "%s: %s", j->path, msg, rep->aside_path, strerror(errno));
            journal_free(j);
            return CUZK_E_IO;
        }
        rep->moved_aside = true;
        rc = db_open(&j->db, j->path, false, msg, sizeof msg);
        if (rc == SQLITE_OK) salvage(j, rep->aside_path, rep);
        if (rc == SQLITE_OK)
            cuzk_log(CLOG_WARN, "journal %s: %u record(s) recovered from %s%s", j->path,
                     rep->salvaged, rep->aside_path,
                     rep->salvage_incomplete ? " (the rest could not be read; see above)" : "");
    }
    if (rc != SQLITE_OK) {
        cuzk_fail(err, CUZK_E_IO, "journal %s: cannot open: %s", j->path, msg);
        journal_free(j);
        return CUZK_E_IO;
    }
    if ((rc = prepare_all(j))) {
        fail_db(j, j->db, rc, err, "cannot prepare statements");
        journal_free(j);
        return err ? err->code : CUZK_E_IO;
    }
    /* What the database holds against what was acknowledged, before anything is deleted */
    journal_audit_acks(j, rep);
    /* the database is what is trusted from now on: the log restarts from it, checkpointed */
    checkpoint(j);
    if ((e = acks_rewrite(&j->acks, j->acks_path, j->db))) {
        cuzk_fail(err, CUZK_E_IO, "journal %s: cannot write the acknowledgement log %s: %s "
                  "(the state directory must be writable)", j->path, j->acks_path, strerror(e));
        journal_free(j);
        return err ? err->code : CUZK_E_IO;
    }
    /* One record per id: the live one (unfinished, or completed: the oldest, which requests
     * with the same id joined), else the newest failed/cancelled one. Others are leftovers
     * of a crash between recording a request and learning that it joined an existing job. */
    sqlite3_stmt *d = NULL;
    if (!sqlite3_prepare_v2(j->db,
            "DELETE FROM jobs WHERE seq NOT IN (SELECT COALESCE(MIN(CASE WHEN finished = 0 OR "
            "status = ?1 THEN seq END), MAX(seq)) FROM jobs GROUP BY id)", -1, &d, NULL) &&
        sqlite3_bind_int(d, 1, JOURNAL_COMPLETED) == SQLITE_OK && sqlite3_step(d) == SQLITE_DONE)
        rep->superseded = (unsigned)sqlite3_changes(j->db);
    sqlite3_finalize(d);
    maintain(j, true, &rep->expired);
    checkpoint(j);   /* journal.db holds everything from here on (salvaged records too) */
    rep->pending = count_where(j->db, "SELECT count(*) FROM jobs WHERE finished = 0");
    rep->finished = count_where(j->db, "SELECT count(*) FROM jobs WHERE finished = 1");
    cuzk_log(CLOG_INFO, "journal %s: %s; %u unfinished job(s) to re-queue, %u finished result(s) "
             "kept%s", j->path, rep->created ? "created" : "opened", rep->pending, rep->finished,
             rep->superseded ? " (superseded duplicate records removed)" : "");
    j->last_maintain_ms = unix_ms();
    *out = j;
    return CUZK_OK;
}

void journal_close(struct journal *j)
{
    if (!j) return;
    jr_lock(j);
    for (struct pending_finish *p; (p = q_pop(j));) {
        do_finish(j, p->token, &p->r);
        free(p);
    }
    exec1(j->db, "PRAGMA incremental_vacuum");
    checkpoint(j);
    sqlite3_wal_checkpoint_v2(j->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    pthread_mutex_unlock(&j->mu);
    journal_free(j);
}
