/* tuning.cu: the process-wide knob table of gpu_tuning.h, and its parser. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_internal.cuh"

struct gpu_tuning gpu_tuning = {
#define GPU_TUNING_DEFAULT(f, name, dflt, lo, hi) (uint64_t)(dflt),
    GPU_TUNING_TABLE(GPU_TUNING_DEFAULT)
#undef GPU_TUNING_DEFAULT
};

struct knob {
    const char *name;
    size_t off;
    uint64_t dflt, lo, hi;
};
static const struct knob knobs[] = {
#define GPU_TUNING_ROW(f, name, dflt, lo, hi) \
    {name, offsetof(struct gpu_tuning, f), (uint64_t)(dflt), (uint64_t)(lo), (uint64_t)(hi)},
    GPU_TUNING_TABLE(GPU_TUNING_ROW)
#undef GPU_TUNING_ROW
};
#define N_KNOBS (sizeof knobs / sizeof knobs[0])

static uint64_t *field(const struct knob *k) { return (uint64_t *)((char *)&gpu_tuning + k->off); }

extern "C" void gpu_tuning_reset(void)
{
    for (size_t i = 0; i < N_KNOBS; i++) *field(&knobs[i]) = knobs[i].dflt;
}

extern "C" void gpu_tuning_print(FILE *f)
{
    for (size_t i = 0; i < N_KNOBS; i++)
        fprintf(f, "%-20s %llu (default %llu)\n", knobs[i].name, (unsigned long long)*field(&knobs[i]),
                (unsigned long long)knobs[i].dflt);
}

extern "C" int gpu_tuning_set(const char *assignment, struct cuzk_error *err)
{
    const char *eq = assignment ? strchr(assignment, '=') : NULL;
    if (!eq || eq == assignment)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu tuning: expected NAME=VALUE, got '%s'",
                         assignment ? assignment : "(null)");
    const size_t nlen = (size_t)(eq - assignment);
    const struct knob *k = NULL;
    for (size_t i = 0; i < N_KNOBS && !k; i++)
        if (strlen(knobs[i].name) == nlen && !strncmp(knobs[i].name, assignment, nlen)) k = &knobs[i];
    if (!k)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "gpu tuning: unknown knob '%.*s' (cuzk-bench-gpu gpu-tuning lists them)",
                         (int)nlen, assignment);
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(eq + 1, &end, 10);
    unsigned shift = 0;
    if (end && (*end == 'k' || *end == 'K')) shift = 10, end++;
    else if (end && *end == 'M') shift = 20, end++;
    else if (end && *end == 'G') shift = 30, end++;
    if (errno || end == eq + 1 || *end || eq[1] == '-' || (shift && v > (UINT64_MAX >> shift)))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu tuning: %s: '%s' is not a number (k/M/G suffix allowed)",
                         k->name, eq + 1);
    const uint64_t x = (uint64_t)v << shift;
    /* 0 is also accepted where it is the default ("the backend's own choice") */
    if (!(x == 0 && k->dflt == 0) && (x < k->lo || x > k->hi))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu tuning: %s = %llu is outside %llu..%llu", k->name,
                         (unsigned long long)x, (unsigned long long)k->lo, (unsigned long long)k->hi);
    *field(k) = x;
    return CUZK_OK;
}
