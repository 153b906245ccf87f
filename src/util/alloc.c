/* alloc.c: the allocation seam (one place to fail allocations in tests). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/util.h"

static _Atomic long fail_after = -1;

static int should_fail(void)
{
    long v = atomic_load(&fail_after);
    while (v >= 0) {
        if (atomic_compare_exchange_weak(&fail_after, &v, v - 1)) return v == 0;
    }
    return 0;
}

void cuzk_alloc_fail_after(long n) { atomic_store(&fail_after, n); }
void *cuzk_malloc(size_t n) { return should_fail() ? NULL : malloc(n ? n : 1); }
void *cuzk_calloc(size_t n, size_t size) { return should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1); }
void *cuzk_realloc(void *p, size_t n) { return should_fail() ? NULL : realloc(p, n ? n : 1); }
void cuzk_free(void *p) { free(p); }
void cuzk_wipe(void *p, size_t n)
{
    if (p) explicit_bzero(p, n);
}
void cuzk_free_secret(void *p, size_t n)
{
    cuzk_wipe(p, n);
    free(p);
}
