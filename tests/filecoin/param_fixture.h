/* param_fixture.h: a parameter set made by a local setup (NOT for production) once per build
 * tree and circuit shape, shared by the test programs that prove a Filecoin circuit:
 * <build>/test-cache/<leaf>/<v28 stem>.{params,vk,shape} plus the digest cache a FULL
 * validation would leave, so a daemon loads it without minutes of subgroup checks. Redone only
 * when the circuit's shape changed; one process makes it while the others wait on a lock and
 * reuse it. The per-circuit front-ends are porep_fixture.h and snap_fixture.h. Header-only. */
#ifndef CUZK_TEST_PARAM_FIXTURE_H
#define CUZK_TEST_PARAM_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuzk/groth16.h"
#include "test.h"

struct param_fixture {
    char dir[512], stem[256];
    char params[900], vk[900], shape[900];
    double setup_s;         /* 0 when the cached set was reused */
};

/* Under sanitizers a setup takes far too long: skipped unless CUZK_TEST_SLOW=1. */
static inline void param_fixture_skip_if_slow(const char *what)
{
    bool san = false;
#if defined(__SANITIZE_ADDRESS__)
    san = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    san = true;
#endif
#endif
    const char *slow = getenv("CUZK_TEST_SLOW");
    if (san && !(slow && !strcmp(slow, "1")))
        test_skip("%s under a sanitizer (set CUZK_TEST_SLOW=1 to run)", what);
}

static inline bool pf_same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    static char ba[1 << 16], bb[1 << 16];
    while (same) {
        size_t na = fread(ba, 1, sizeof ba, fa), nb = fread(bb, 1, sizeof bb, fb);
        if (na != nb || memcmp(ba, bb, na)) same = false;
        if (na < sizeof ba) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* "<params>.validated" (docs/formats.md, "Digest cache") for a file this process made: the
 * digest of a CURVE read, no subgroup check for points we generated ourselves. */
static inline void pf_write_digest_cache(const char *params)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    struct g16_pk pk;
    struct g16_params_read_opts o = {.mode = G16_VALIDATE_CURVE, .use_cache = false};
    struct g16_params_read_report rep;
    memset(&rep, 0, sizeof rep);
    ASSERT_OK(g16_params_read_ex(&pk, params, &o, pool_default(), &rep, err), err);
    g16_pk_free(&pk);
    ASSERT(rep.digest_valid);
    struct stat st;
    ASSERT(stat(params, &st) == 0);
    char path[1000], hex[33];
    for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", rep.digest[i]);
    snprintf(path, sizeof path, "%s.validated", params);
    FILE *f = fopen(path, "w");
    ASSERT(f);
    fprintf(f, "cuzk params validated v1\nsize %llu\nmtime %lld.%09lld\ndigest %s\n",
            (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
            (long long)st.st_mtim.tv_nsec, hex);
    ASSERT(fclose(f) == 0);
}

/* Fill fx with the set of the circuit whose shape is s, in directory `leaf` of the test cache
 * ($CUZK_TEST_CACHE, else <build>/test-cache) under file stem `stem`, making it first (setup
 * seeded with `seed`) if it is missing or was made for another shape. `label` names the
 * circuit in the log line. */
static inline void param_fixture_make(struct param_fixture *fx, const char *leaf, const char *stem,
                                      const struct g16_shape *s, uint64_t seed, const char *label)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    memset(fx, 0, sizeof *fx);
    const char *env = getenv("CUZK_TEST_CACHE");
    if (env && *env) {
        snprintf(fx->dir, sizeof fx->dir, "%s/%s", env, leaf);
    } else {
        /* build/tests/<module>/test_x -> build/test-cache/<leaf> */
        char exe[400];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        ASSERT(n > 0);
        exe[n] = 0;
        char *d = dirname(dirname(dirname(exe)));
        snprintf(fx->dir, sizeof fx->dir, "%s/test-cache/%s", d, leaf);
    }
    char parent[600];
    snprintf(parent, sizeof parent, "%s", fx->dir);
    *strrchr(parent, '/') = 0;
    ASSERT(mkdir(parent, 0777) == 0 || errno == EEXIST);
    ASSERT(mkdir(fx->dir, 0777) == 0 || errno == EEXIST);
    snprintf(fx->stem, sizeof fx->stem, "%s", stem);
    snprintf(fx->params, sizeof fx->params, "%s/%s.params", fx->dir, fx->stem);
    snprintf(fx->vk, sizeof fx->vk, "%s/%s.vk", fx->dir, fx->stem);
    snprintf(fx->shape, sizeof fx->shape, "%s/%s.shape", fx->dir, fx->stem);

    /* one maker at a time; the others wait and reuse */
    char lock[700], ok[700], fresh[960];
    snprintf(lock, sizeof lock, "%s/.lock", fx->dir);
    snprintf(ok, sizeof ok, "%s/.complete", fx->dir);
    snprintf(fresh, sizeof fresh, "%s.new", fx->shape);
    int lfd = open(lock, O_CREAT | O_RDWR, 0666);
    ASSERT(lfd >= 0);
    ASSERT(flock(lfd, LOCK_EX) == 0);
    /* today's circuit's shape decides whether the cached keys still belong to it */
    ASSERT_OK(g16_shape_save(s, fresh, err), err);
    struct stat st;
    bool reuse = stat(ok, &st) == 0 && stat(fx->params, &st) == 0 && stat(fx->vk, &st) == 0 &&
                 pf_same_file(fresh, fx->shape);
    if (reuse) {
        unlink(fresh);
        char vpath[1000];
        snprintf(vpath, sizeof vpath, "%s.validated", fx->params);
        if (stat(vpath, &st) != 0) pf_write_digest_cache(fx->params);   /* a set copied in by hand */
    } else {
        unlink(ok);
        uint64_t t0 = cuzk_now_ns();
        cuzk_rng rng;
        cuzk_rng_seed(&rng, seed);
        struct g16_pk pk;
        ASSERT_OK(g16_setup(&pk, s, &rng, pool_default(), err), err);
        ASSERT_OK(g16_params_write_ex(&pk, fx->params, true, err), err);   /* with its digest cache */
        ASSERT_OK(g16_vk_write(&pk.vk, fx->vk, err), err);
        g16_pk_free(&pk);
        ASSERT(rename(fresh, fx->shape) == 0);
        fx->setup_s = (double)(cuzk_now_ns() - t0) / 1e9;
        int fd = open(ok, O_CREAT | O_WRONLY, 0666);
        ASSERT(fd >= 0);
        close(fd);
        printf("param fixture: local setup of the %s circuit in %.1f s -> %s\n", label, fx->setup_s,
               fx->dir);
    }
    flock(lfd, LOCK_UN);
    close(lfd);
}

#endif
