/* rng.c: xoshiro256** (tests, benchmarks) and getrandom(2) (blinding factors, toxic waste). */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cuzk/util.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void cuzk_rng_seed(cuzk_rng *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t cuzk_rng_u64(cuzk_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

void cuzk_rng_bytes(cuzk_rng *rng, void *out, size_t n)
{
    unsigned char *p = out;
    while (n) {
        uint64_t v = cuzk_rng_u64(rng);
        size_t k = n < 8 ? n : 8;
        memcpy(p, &v, k);
        p += k;
        n -= k;
    }
}

int cuzk_os_random(void *out, size_t n, struct cuzk_error *err)
{
    unsigned char *p = out;
    while (n) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return cuzk_fail(err, CUZK_E_IO, "getrandom: %s", strerror(errno));
        }
        p += got;
        n -= (size_t)got;
    }
    return CUZK_OK;
}

uint64_t cuzk_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
