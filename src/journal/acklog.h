/* acklog.h: the journal's acknowledgement log (src/journal/acklog.c), internal to src/journal.
 * A small append-only file beside journal.db (journal.acks) that names every record the
 * journal made durable before it was acknowledged ('A' seq id, fsync'd before journal_stage
 * returns), every record deleted on purpose ('D', fsync'd before the deletion runs) and every
 * result written ('F', flushed before the next checkpoint). It lives in a file of its own so
 * that damage to journal.db or journal.db-wal (deleted, cut, garbled) can be measured against
 * it at open: a record it names as acknowledged and not deleted that the database no longer
 * holds is a job the journal lost, reported by id. Why a side file: docs/decisions.md. */
#ifndef CUZK_JOURNAL_ACKLOG_H
#define CUZK_JOURNAL_ACKLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#define ACKS_FILE "journal.acks"

/* One record's history as the log tells it (acks_load merges the entries of a seq). */
struct acks_entry {
    uint64_t seq;
    char id[128];
    bool acked, finished, deleted;
};

/* What acks_load found. */
struct acks_read {
    bool existed;                    /* the file was there */
    uint64_t size;
    unsigned bad_regions;            /* runs of bytes that were no valid entry (skipped) */
    uint64_t bad_bytes, first_bad_offset;
    struct acks_entry *e;            /* sorted by seq, one per seq (free with free()) */
    size_t n;
};

struct acks;

/* Read the log at path (a missing file is no error: rd->existed false). Entries are kept while
 * their checksum holds; a damaged region is skipped to the next valid entry. Returns 0 or an
 * errno (the file exists and cannot be read). */
int acks_load(const char *path, struct acks_read *rd);

/* Rewrite the log at path from the records db holds now (an 'A' for each, an 'F' for each
 * finished one): written beside it, fsync'd, renamed over it, the directory fsync'd; then open
 * it for appending. *out is replaced (the old handle closed). Returns 0 or an errno. */
int acks_rewrite(struct acks **out, const char *path, sqlite3 *db);

/* Append one entry ('A', 'F' or 'D'); with sync the file is fdatasync'd before this returns.
 * Returns 0 or an errno (nothing is promised then). */
int acks_append(struct acks *a, char type, uint64_t seq, const char *id, bool sync);
/* Make every entry appended so far durable. Returns 0 or an errno. */
int acks_sync(struct acks *a);
/* Bytes appended since the last rewrite, and the size that rewrite left (for compaction). */
uint64_t acks_grown(const struct acks *a);
uint64_t acks_base(const struct acks *a);
void acks_close(struct acks *a);

/* The log against the database: an entry acknowledged and not deleted whose record db does not
 * hold, and whose id no other record holds, is lost (d->lost); one the log saw finish that db
 * holds unfinished had its result dropped (d->undone: it is proved again). Free the arrays with
 * free(). Returns 0, ENOMEM, or EIO when db cannot be read. */
struct acks_diff {
    struct acks_entry *lost, *undone;
    size_t n_lost, n_undone;
};
int acks_compare(const struct acks_read *rd, sqlite3 *db, struct acks_diff *d);
/* "'a', 'b', ..." of as many of e[0..n) as fit in cap; returns how many fit. */
size_t acks_format_ids(const struct acks_entry *e, size_t n, char *out, size_t cap);
/* Log "head: 'a', 'b', ...; tail" at level, in as many lines as the ids need (each line says
 * which of the n it lists). */
void acks_log_ids(int level, const char *head, const struct acks_entry *e, size_t n,
                  const char *tail);

#endif
