/* journal_internal.h: the journal's state, shared by journal.c (the SQLite store) and
 * journal_audit.c (what was lost, measured at open). Internal to src/journal. */
#ifndef CUZK_JOURNAL_INTERNAL_H
#define CUZK_JOURNAL_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "cuzk/journal.h"
#include "acklog.h"

/* A result waiting for the journal while another thread holds it (journal_finish). */
struct pending_finish {
    struct pending_finish *next;
    uint64_t token;
    struct journal_record r;         /* error and proof point into this allocation's copies */
};

struct journal {
    pthread_mutex_t mu;              /* the connection and everything below */
    pthread_mutex_t qmu;             /* the queue of results only */
    struct pending_finish *q_head, *q_tail;
    sqlite3 *db;
    sqlite3_stmt *st_insert, *st_finish, *st_get, *st_discard;
    struct journal_options opt;
    int lock_fd;
    uint64_t last_maintain_ms;
    struct acks *acks;               /* the acknowledgement log (acklog.h) */
    struct journal_lost *lost;       /* acknowledged jobs this journal lost (journal_lost) */
    size_t n_lost, cap_lost;
    struct acks_read acks_read;      /* what the log said at open (until the replay ends) */
    char dir[512], path[540], wal[560], lock[560], acks_path[560];
};

/* ---- journal_audit.c ---- */

/* Record seq as lost (mu held or single-threaded open). The id the acknowledgement log gave it
 * is preferred: the one the record holds may be the garbled part. */
void journal_audit_lost_add(struct journal *j, uint64_t seq, const char *id, bool finished);
/* Scan the write-ahead log of an existing journal (rep's wal_* fields) and warn about what
 * SQLite's recovery is about to drop. */
void journal_audit_wal(struct journal *j, struct journal_report *rep);
/* The ids of the records after seq `after` of a damaged database, from its index on id, as a
 * sentence for a warning (at most cap bytes). */
void journal_audit_index_ids(sqlite3 *db, uint64_t after, char *out, size_t cap);
/* Compare the database with the acknowledgement log read at open (j->acks_read): count and
 * list the lost jobs (journal_lost, rep) and the results undone, and log them by id. */
void journal_audit_acks(struct journal *j, struct journal_report *rep);

#endif
