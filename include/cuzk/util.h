/* util.h: the shared thread pool, random numbers, allocation seam and timing.
 * See docs/decisions.md ("Thread pool"). */
#ifndef CUZK_UTIL_H
#define CUZK_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"

/* ---- allocation seam: all large library allocations go through here (tests may inject
 * failures with cuzk_alloc_fail_after). Return NULL on failure, never abort. ---- */
void *cuzk_malloc(size_t n);
void *cuzk_calloc(size_t n, size_t size);
void *cuzk_realloc(void *p, size_t n);
void cuzk_free(void *p);
/* Advises huge pages for the page-aligned part of [p, p + n) when n is at least 2 MiB (no-op
 * below, or where the kernel does not offer them): a large buffer filled once takes fewer,
 * cheaper first-touch faults (a 32 GiB partition's 4 GB witness, a 32 GiB C1's parse). */
void cuzk_advise_huge(void *p, size_t n);
/* Clears n bytes of a secret (blinding factors, toxic waste) with a store the compiler may
 * not drop as dead, which a plain memset before the end of its lifetime may be. */
void cuzk_wipe(void *p, size_t n);
/* cuzk_wipe, then cuzk_free: a heap buffer that held n bytes of secrets (p may be NULL). */
void cuzk_free_secret(void *p, size_t n);
/* Test hook: the (n+1)-th allocation from now fails; -1 disables. */
void cuzk_alloc_fail_after(long n);

/* ---- allocation meter: bounds what one piece of work allocates on its thread ----
 * While a meter is active on a thread (cuzk_meter_begin .. cuzk_meter_end), every cuzk_malloc,
 * cuzk_calloc and cuzk_realloc made on that thread adds the block's size (malloc_usable_size
 * plus the allocator's header) to used, cuzk_free subtracts it, and an allocation that would
 * take used past limit fails (returns NULL) and sets over. Lets a server give a request's
 * parse a share of its memory budget and turn the parse's "out of memory" into a precise
 * refusal. Blocks allocated before begin and freed inside subtract (never below 0). */
struct cuzk_meter {
    uint64_t limit;   /* bytes allowed */
    uint64_t used;    /* bytes now charged */
    uint64_t peak;    /* the most used ever was */
    bool over;        /* an allocation was refused */
};
/* Make m the calling thread's meter, starting at used bytes (memory the work already holds). */
void cuzk_meter_begin(struct cuzk_meter *m, uint64_t limit, uint64_t used);
/* Stop metering on this thread (m keeps its figures). */
void cuzk_meter_end(void);
/* Charge (delta > 0) or credit (delta < 0) memory allocated outside the seam; false (and over
 * set) when a charge takes used past the limit (the charge is kept: the memory exists). */
bool cuzk_meter_charge(int64_t delta);
/* Has the calling thread's active meter refused an allocation? false without a meter. */
bool cuzk_meter_over(void);

/* ---- thread pool ----
 * One pool is shared by the whole library (MSM, NTT, SpMV, validation). A parallel_for
 * blocks the caller, which also works on its own job; calls from several threads at once
 * are allowed (jobs are served in FIFO order); a call made from inside a pool worker runs
 * serially on that worker (no deadlock on nesting). */
struct pool;
/* nthreads = 0: the number of online CPUs. Returns NULL and fills err on failure. */
struct pool *pool_new(unsigned nthreads, struct cuzk_error *err);
void pool_free(struct pool *p);
/* Number of threads that work on a job, the caller included. */
unsigned pool_size(const struct pool *p);
/* Process-wide pool, created on first use with the threads set below or one per online CPU.
 * Never NULL (falls back to a 1-thread "pool" that runs inline if threads cannot be created). */
struct pool *pool_default(void);
/* Threads of the process-wide pool, as a decimal string (NULL, "" or "0": one per online CPU;
 * the programs pass their CUZK_THREADS or configuration value). CUZK_E_INVALID_ARG if s is not
 * a number, CUZK_E_BUSY once the pool exists (call it before any parallel work). */
int pool_default_set_threads(const char *s, struct cuzk_error *err);
/* fn(ctx, begin, end, worker): process items [begin, end); worker in [0, pool_size). */
typedef void (*pool_fn)(void *ctx, size_t begin, size_t end, unsigned worker);
/* Split [0, n) into chunks of at least `grain` items and run them on the pool. */
void pool_parallel_for(struct pool *p, size_t n, size_t grain, pool_fn fn, void *ctx);

/* ---- random numbers ----
 * cuzk_rng: xoshiro256** for tests and benchmarks (reproducible from a seed; NOT for
 * proof blinding). cuzk_os_random: the kernel's CSPRNG (getrandom). */
typedef struct { uint64_t s[4]; } cuzk_rng;
void cuzk_rng_seed(cuzk_rng *rng, uint64_t seed);
uint64_t cuzk_rng_u64(cuzk_rng *rng);
void cuzk_rng_bytes(cuzk_rng *rng, void *out, size_t n);
/* Fills out with n bytes from getrandom(2); CUZK_E_IO if the kernel refuses. */
int cuzk_os_random(void *out, size_t n, struct cuzk_error *err);

/* ---- time ---- */
uint64_t cuzk_now_ns(void);   /* CLOCK_MONOTONIC */

#endif
