/* journal_audit.c: what the journal lost, measured at open (journal_open): the write-ahead log
 * against what SQLite's recovery will keep (walscan.c), the acknowledgement log journal.acks
 * against the database (acklog.c), the ids a damaged database's index still names, and the list
 * of lost jobs (journal_lost) that AwaitProof and CancelProof answer from. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cuzk/journal.h"
#include "cuzk/log.h"
#include "acklog.h"
#include "journal_internal.h"
#include "walscan.h"

/* ------------------------------------------------------------ lost jobs -- */

/* Record seq as lost (mu held or single-threaded open). The id the acknowledgement log gave it
 * is preferred: the one the record holds may be the garbled part. */
void journal_audit_lost_add(struct journal *j, uint64_t seq, const char *id, bool finished)
{
    const struct acks_read *rd = &j->acks_read;
    for (size_t lo = 0, hi = rd->n; lo < hi;) {
        size_t mid = lo + (hi - lo) / 2;
        if (rd->e[mid].seq == seq) { if (rd->e[mid].id[0]) id = rd->e[mid].id; break; }
        if (rd->e[mid].seq < seq) lo = mid + 1; else hi = mid;
    }
    if (j->n_lost == j->cap_lost) {
        size_t nc = j->cap_lost ? 2 * j->cap_lost : 16;
        struct journal_lost *nl = realloc(j->lost, nc * sizeof *nl);
        if (!nl) return;
        j->lost = nl;
        j->cap_lost = nc;
    }
    struct journal_lost *l = &j->lost[j->n_lost++];
    l->seq = seq;
    l->finished = finished;
    snprintf(l->id, sizeof l->id, "%s", id);
}

size_t journal_lost(const struct journal *j, const struct journal_lost **out)
{
    *out = j->lost;
    return j->n_lost;
}

/* ------------------------------------------------------------- at open -- */

/* Scan the write-ahead log before SQLite opens the database and say what its recovery is about
 * to drop (open, an existing journal). */
void journal_audit_wal(struct journal *j, struct journal_report *rep)
{
    wal_scan(j->wal, rep);
    if (rep->wal_damaged && rep->wal_lost_commits)
        cuzk_log(CLOG_WARN, "journal %s: the write-ahead log %s is damaged at byte %" PRIu64 " of %"
                 PRIu64 " (garbled on disk); SQLite keeps the transactions before that point and "
                 "drops the rest, which holds %u committed transaction(s) (what they cost is "
                 "compared with the acknowledgement log below)", j->path, j->wal,
                 rep->wal_damage_offset, rep->wal_size, rep->wal_lost_commits);
    else if (rep->wal_damaged)
        cuzk_log(CLOG_WARN, "journal %s: the write-ahead log %s ends in a torn or unfinished "
                 "transaction (bytes %" PRIu64 " to %" PRIu64 "): a write that did not complete "
                 "(the process or the machine died mid-write, or the write failed, e.g. disk "
                 "full); SQLite drops it (what it costs is compared with the acknowledgement log "
                 "below)",
                 j->path, j->wal, rep->wal_damage_offset, rep->wal_size);
    else if (rep->wal_uncommitted)
        cuzk_log(CLOG_INFO, "journal %s: the last transaction in the write-ahead log (%u "
                 "frame(s)) never committed; dropped (it was never acknowledged)", j->path,
                 rep->wal_uncommitted);
}

/* The ids of the records after seq `after` of a damaged database, read from the index on id
 * (a b-tree of its own, often intact when table pages are not), for the warning. */
void journal_audit_index_ids(sqlite3 *db, uint64_t after, char *out, size_t cap)
{
    sqlite3_stmt *st = NULL;
    size_t n = 0;
    unsigned count = 0, shown = 0;
    int rc = sqlite3_prepare_v2(db, "SELECT id, seq FROM jobs INDEXED BY jobs_by_id", -1, &st, NULL);
    out[0] = 0;
    if (rc == SQLITE_OK) {
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            if ((uint64_t)sqlite3_column_int64(st, 1) <= after) continue;
            count++;
            const char *id = (const char *)sqlite3_column_text(st, 0);
            if (shown < 32 && n + 140 < cap) {
                n += (size_t)snprintf(out + n, cap - n, "%s'%.127s'", shown ? ", " : "jobs ",
                                      id ? id : "");
                shown++;
            }
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        snprintf(out + n, cap - n, "%sthe ids of %s cannot be read either (%s)",
                 n ? "; " : "", n ? "the others" : "those records", sqlite3_errstr(rc));
    else if (count > shown)
        snprintf(out + n, cap - n, " and %u more", count - shown);
    else if (!count)
        snprintf(out, cap, "none listed in the index");
}

/* Compare the database with the acknowledgement log, report and list what is lost (open,
 * single-threaded; journal_open then rewrites the log from the database). */
void journal_audit_acks(struct journal *j, struct journal_report *rep)
{
    const struct acks_read *rd = &j->acks_read;
    const char *why = rep->moved_aside ? "journal.db was damaged and moved aside"
                    : rep->wal_damaged ? "its write-ahead log was damaged"
                    : "journal.db or its write-ahead log was deleted, cut or replaced";
    if (!rd->existed && !rep->created) {
        rep->acks_missing = true;
        cuzk_log(CLOG_WARN, "journal %s: no acknowledgement log %s beside it (the first start of "
                 "a cuzk that writes one, or it was deleted): a job lost to damage cannot be "
                 "counted at this start; it is written now", j->path, j->acks_path);
    }
    if (rd->bad_regions) {
        rep->acks_bad_regions = rd->bad_regions;
        cuzk_log(CLOG_WARN, "journal %s: the acknowledgement log %s is damaged (%u stretch(es), "
                 "%" PRIu64 " of %" PRIu64 " bytes, the first at byte %" PRIu64 "; skipped); the "
                 "records it still names are compared below and it is rewritten from the journal",
                 j->path, j->acks_path, rd->bad_regions, rd->bad_bytes, rd->size,
                 rd->first_bad_offset);
    }
    struct acks_diff d;
    int e = rd->existed ? acks_compare(rd, j->db, &d) : (memset(&d, 0, sizeof d), 0);
    if (e) {
        cuzk_log(CLOG_WARN, "journal %s: cannot compare it with %s: %s", j->path, j->acks_path,
                 strerror(e));
        memset(&d, 0, sizeof d);
    }
    unsigned acked = 0;
    for (size_t i = 0; i < rd->n; i++) acked += rd->e[i].acked && !rd->e[i].deleted;
    for (size_t i = 0; i < d.n_lost; i++) {
        journal_audit_lost_add(j, d.lost[i].seq, d.lost[i].id, d.lost[i].finished);
        if (d.lost[i].finished) rep->lost_results++; else rep->lost_jobs++;
    }
    char head[900];
    if (d.n_lost) {
        snprintf(head, sizeof head, "journal %s: %zu of %u acknowledged job(s) LOST (%u "
                 "unfinished, %u with a finished result): %s", j->path, d.n_lost, acked,
                 rep->lost_jobs, rep->lost_results, why);
        acks_log_ids(CLOG_ERROR, head, d.lost, d.n_lost, "AwaitProof and CancelProof for them "
                     "answer NOT_FOUND saying the journal lost them: their clients must submit "
                     "them again (the same request id starts them anew)");
    }
    if (d.n_undone) {
        rep->results_undone = (unsigned)d.n_undone;
        snprintf(head, sizeof head, "journal %s: %zu finished result(s) lost (%s), their "
                 "requests kept", j->path, d.n_undone, why);
        acks_log_ids(CLOG_WARN, head, d.undone, d.n_undone, "these jobs are proved again");
    }
    if (rd->existed && (rep->wal_damaged || rep->moved_aside) && !d.n_lost)
        cuzk_log(CLOG_WARN, "journal %s: compared with %s: all %u acknowledged job(s) are still "
                 "held; none is lost", j->path, j->acks_path, acked);
    free(d.lost);
    free(d.undone);
}
