/* journal.h: the daemon's durable job journal (src/journal/journal.c): every accepted proof
 * request and every finished result, in an SQLite database in WAL mode under [daemon]
 * state_dir, so a crash, an OOM kill or a reboot loses no accepted job and a finished result
 * stays answerable for result_retention. Linked only into cuzk-daemon and its tests (the core
 * library and the engine never link SQLite; the engine reaches it through engine_hooks).
 * Generic: records are (id, kind, priority, request bytes, result), the caller encodes the
 * request. See docs/daemon.md ("The job journal") and docs/decisions.md. */
#ifndef CUZK_JOURNAL_H
#define CUZK_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"

#define JOURNAL_ID_MAX 128          /* ids are at most 127 bytes (as engine job ids) */
#define JOURNAL_FILE "journal.db"   /* in the state directory, with journal.db-wal, journal.lock */
/* Result statuses are the engine's numbers (enum engine_status); the journal only needs to
 * know which one means a proof exists: a completed id is never proved again. */
#define JOURNAL_COMPLETED 1

struct journal;

struct journal_options {
    uint64_t retention_ms;          /* finished records are kept this long ... */
    uint32_t retention_count;       /* ... and at most this many (the newest) */
};

/* One record. Unfinished: request holds the request's bytes as staged. Finished: status
 * (the engine's COMPLETED/FAILED/CANCELLED numbers), error, proof and timings; the request
 * is gone (it is dropped when the result is written). Times are Unix milliseconds. */
struct journal_record {
    uint64_t seq;                   /* accept order (the token of journal_stage) */
    char id[JOURNAL_ID_MAX];
    int kind, priority;
    bool finished;
    const uint8_t *request; size_t request_len;
    int status;
    const char *error;
    const uint8_t *proof; size_t proof_len;
    const uint8_t *aggregate; size_t aggregate_len;   /* NI-PoRep's verified aggregate (or none) */
    uint64_t queue_wait_ms, srs_load_ms, synthesis_ms, gpu_compute_ms, total_ms;
    uint64_t accepted_at_ms, finished_at_ms;
};

/* What journal_open found and did (also logged: warnings name what was dropped). */
struct journal_report {
    bool created;                   /* no journal existed */
    /* the write-ahead log: damaged = a torn or garbled frame where a valid one was due */
    bool wal_damaged;
    uint64_t wal_size, wal_damage_offset;
    unsigned wal_lost_commits;      /* committed transactions after the damage (dropped) */
    unsigned wal_uncommitted;       /* frames of a transaction that never committed */
    /* a database SQLite calls corrupt (or not a database): moved aside, salvaged up to the
     * last readable record */
    bool moved_aside;
    char aside_path[600];
    unsigned salvaged;               /* records copied from the moved-aside file */
    bool salvage_incomplete;         /* reading it stopped at an unreadable record */
    /* records dropped: checksum mismatch (named in the log), superseded duplicates of an id,
     * staged but never decided (none: a staged record is replayed) */
    unsigned bad_checksum, superseded, expired;
    unsigned pending, finished;     /* what journal_replay will hand back */
    /* the comparison with the acknowledgement log (journal.acks, see journal_open) */
    bool acks_missing;              /* no log beside an existing journal: nothing to compare */
    unsigned acks_bad_regions;      /* damaged stretches of the log (skipped) */
    unsigned lost_jobs;             /* acknowledged, unfinished, gone: journal_lost names them */
    unsigned lost_results;          /* finished, gone with their record: also in journal_lost */
    unsigned results_undone;        /* a result gone, its request kept: proved again */
};

/* A job the journal acknowledged and cannot give back (its record is gone). */
struct journal_lost {
    uint64_t seq;
    char id[JOURNAL_ID_MAX];
    bool finished;                  /* it had finished: its result is what was lost */
};

/* Open (creating dir and the database if needed) and lock the journal in dir: one process
 * at a time (CUZK_E_BUSY naming the holder's pid otherwise). A torn write-ahead log is
 * recovered by SQLite up to the last committed transaction; a database that SQLite reports
 * corrupt (PRAGMA integrity_check) is moved aside (journal.db.corrupt-<unix time>) and its
 * readable records copied into a fresh one; both are logged as warnings, never fatal. Then
 * what the database holds is compared with the acknowledgement log (journal.acks, a file of
 * its own naming every record staged and every record deleted on purpose): each acknowledged
 * job whose record is gone is logged by id with the count and listed by journal_lost.
 * CUZK_E_IO naming the path when the directory or the database cannot be used at all.
 * report may be NULL. */
int journal_open(struct journal **out, const char *dir, const struct journal_options *o,
                 struct journal_report *report, struct cuzk_error *err);
/* The jobs this journal lost (found at open, and records journal_replay dropped by their
 * checksum): *out is valid until journal_close. */
size_t journal_lost(const struct journal *j, const struct journal_lost **out);
/* Checkpoint, return free pages to the file system, unlock, free. NULL is a no-op. */
void journal_close(struct journal *j);
const char *journal_path(const struct journal *j);   /* ".../journal.db" */

/* Every kept record, in accept order (finished and unfinished), each checked against the
 * checksum written with it (a mismatch is logged, naming the id, and the record deleted).
 * fn's pointers are valid during the call; a non-zero return stops the replay and is
 * returned. Run before any journal_stage of this process. */
typedef int (*journal_replay_fn)(void *ctx, const struct journal_record *r);
int journal_replay(struct journal *j, journal_replay_fn fn, void *ctx, struct cuzk_error *err);

/* Make a new request durable before it is acknowledged: fsync'd in the write-ahead log, noted
 * in the acknowledgement log (fsync'd) and checkpointed into journal.db, so it survives the
 * loss or damage of any one of these files. *token identifies the record. Disk full or an I/O error: CUZK_E_NOMEM naming the journal's path (the request is
 * not accepted; nothing already written is touched). */
int journal_stage(struct journal *j, const char *id, int kind, int priority,
                  const uint8_t *request, size_t request_len, uint64_t *token,
                  struct cuzk_error *err);
/* A staged request that was not accepted after all (refused, or it joined an existing job
 * with the same id): delete it. Failures are logged (the record is then replayed at the next
 * start, which is harmless: the same id joins or re-proves). */
void journal_discard(struct journal *j, uint64_t token);
/* Record the result of record token (r->request is ignored, r->seq too): the request bytes
 * are dropped, the result kept for the retention. Not fsync'd (a result lost to a power
 * failure is proved again; an accepted request is never lost). Never blocks on a long write
 * of another thread: it is then queued and written when that one ends. Failures are logged. */
void journal_finish(struct journal *j, uint64_t token, const struct journal_record *r);

#endif
