/* progress.h: progress of long work (a key read, a trusted setup, a batch of proofs): a count
 * done of a total, its rate and ETA, and the line a person reads. On a terminal one line is
 * rewritten in place a few times a second; on a pipe or a log, a plain line at each tenth and
 * at least every CUZK_PROGRESS_PLAIN_S seconds, so a journal is not flooded. Any number of
 * threads may add at once and another may read the counters (a status page): the counters are
 * atomics, the line is built and written by whichever thread finds it due. No allocation. */
#ifndef CUZK_PROGRESS_H
#define CUZK_PROGRESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CUZK_PROGRESS_TTY_MS 250       /* terminal: redraw at most this often */
#define CUZK_PROGRESS_PLAIN_S 30       /* plain: a line at least this often (besides tenths) */

struct cuzk_progress {
    /* set by cuzk_progress_init, read only by the thread that prints */
    FILE *out;                         /* NULL: counters only, nothing printed */
    bool tty;                          /* out is a terminal: one line redrawn in place */
    const char *what;                  /* the object: a path, "batch" */
    const char *unit;                  /* what the counts are shown in: "MiB", "proofs" */
    double scale;                      /* units per count (bytes shown in MiB: 1.0 / 2^20) */
    /* readable by any thread at any time */
    _Atomic(const char *) phase;       /* the step now: "reading", "checking"; NULL before */
    atomic_uint_fast64_t total, done;  /* counts */
    atomic_uint_fast64_t t0_ns;        /* when the phase began (cuzk_now_ns) */
    /* the printer's state */
    atomic_uint_fast64_t next_ns;      /* the next line is due at this time */
    atomic_uint tenth;                 /* plain: the last tenth printed */
};

/* Ready p to print to out (NULL: silent), the terminal form if out is a terminal. The
 * strings are borrowed and must outlive p. */
void cuzk_progress_init(struct cuzk_progress *p, FILE *out, const char *what, const char *unit,
                        double scale);
/* A new phase of total counts from now (done back to 0). */
void cuzk_progress_phase(struct cuzk_progress *p, const char *phase, uint64_t total);
/* n more counts done (from any thread); prints the line if one is due. */
void cuzk_progress_add(struct cuzk_progress *p, uint64_t n);
/* done is now `done` in all (callbacks that report a running total). */
void cuzk_progress_set(struct cuzk_progress *p, uint64_t done);
/* Print the line now, due or not (a terminal's line after other output went above it). */
void cuzk_progress_print(struct cuzk_progress *p);
/* The phase ended: the last line (its count, how long it took) and, on a terminal, the end
 * of the line. */
void cuzk_progress_end(struct cuzk_progress *p);
/* The same at an explicit time (tests; cuzk_progress_add/set/end use cuzk_now_ns()). */
void cuzk_progress_set_at(struct cuzk_progress *p, uint64_t done, uint64_t now_ns);
void cuzk_progress_end_at(struct cuzk_progress *p, uint64_t now_ns);

/* A consistent-enough reading of the counters, for a status page or a line. */
struct cuzk_progress_view {
    const char *what, *phase, *unit;
    double scale;
    uint64_t done, total, elapsed_ns;
};
void cuzk_progress_read(const struct cuzk_progress *p, uint64_t now_ns, struct cuzk_progress_view *v);
/* Counts per second so far (0 before any time passed). */
double cuzk_progress_rate(const struct cuzk_progress_view *v);
/* Seconds left at the rate so far: 0 when done >= total, -1 when unknown (nothing done yet). */
double cuzk_progress_eta_s(const struct cuzk_progress_view *v);
/* The line for v into buf (always NUL-terminated; returns what snprintf would). tty: starts
 * with "\r" and ends by clearing the rest of the terminal line; plain: ends with "\n".
 *   tty:   "\rWHAT: PHASE  45%  1234.5/2746.0 MiB  512.3 MiB/s  ETA 2m05s\033[K"
 *   plain: "WHAT: PHASE 45% (1234.5 of 2746.0 MiB, 512.3 MiB/s, ETA 2m05s)\n"
 * Once done >= total the ETA gives way to "done in 1m02s"; "ETA ?" before anything is done.
 * Counts with scale 1 print as integers. */
int cuzk_progress_format(char *buf, size_t cap, const struct cuzk_progress_view *v, bool tty);

#endif
