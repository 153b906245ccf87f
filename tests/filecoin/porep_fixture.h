/* porep_fixture.h: a 2 KiB PoRep parameter set made by a local setup once and shared by the
 * test programs that prove PoRep (tests/filecoin/test_porep_proof.c, tests/e2e/test_daemon.c):
 * <build>/test-cache/porep-2KiB/<v28 stem>.{params,vk,shape} plus the digest cache a FULL
 * validation would leave, so a daemon loads it without minutes of subgroup checks. The setup
 * (~1 min here) is redone only when the circuit's shape changed. Header-only (static). */
#ifndef CUZK_TEST_POREP_FIXTURE_H
#define CUZK_TEST_POREP_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/groth16.h"
#include "cuzk/porep.h"
#include "test.h"

struct porep_fixture {
    char dir[512], stem[256];
    char params[900], vk[900], shape[900];
    double setup_s;         /* 0 when the cached set was reused */
};

/* Tests that need the fixture are skipped under sanitizers (a setup there takes far too long)
 * unless CUZK_TEST_SLOW=1. */
static void porep_fixture_skip_if_slow(void)
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
        test_skip("2 KiB PoRep setup under a sanitizer (set CUZK_TEST_SLOW=1 to run)");
}

static bool pf_same_file(const char *a, const char *b)
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

/* Fill fx with the shared parameter set, making it first if it is missing or stale. */
static void porep_fixture_get(struct porep_fixture *fx)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    memset(fx, 0, sizeof *fx);
    const char *env = getenv("CUZK_TEST_CACHE");
    if (env && *env) {
        snprintf(fx->dir, sizeof fx->dir, "%s/porep-2KiB", env);
    } else {
        /* build/tests/<module>/test_x -> build/test-cache/porep-2KiB */
        char exe[400];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        ASSERT(n > 0);
        exe[n] = 0;
        char *d = dirname(dirname(dirname(exe)));
        snprintf(fx->dir, sizeof fx->dir, "%s/test-cache/porep-2KiB", d);
    }
    char parent[600];
    snprintf(parent, sizeof parent, "%s", fx->dir);
    *strrchr(parent, '/') = 0;
    ASSERT(mkdir(parent, 0777) == 0 || errno == EEXIST);
    ASSERT(mkdir(fx->dir, 0777) == 0 || errno == EEXIST);
    ASSERT_OK(fil_porep_param_stem(fx->stem, sizeof fx->stem, 2048, err), err);
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

    /* The shape of today's circuit decides whether the cached keys still belong to it. */
    struct porep_config cfg;
    ASSERT_OK(porep_config_for_size(&cfg, 2048, err), err);
    struct g16_builder *b = g16_builder_new(false, err);
    ASSERT(b);
    struct gcs_sink sink = gcs_sink_builder(b);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE, &sink, err), err);
    porep_synthesize(&cs, &cfg, NULL);
    ASSERT_OK(gcs_status(&cs, err), err);
    gcs_free(&cs);
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(b, &s, err), err);
    g16_builder_free(b);
    ASSERT_OK(g16_shape_save(&s, fresh, err), err);
    struct stat st;
    bool reuse = stat(ok, &st) == 0 && stat(fx->params, &st) == 0 && stat(fx->vk, &st) == 0 &&
                 pf_same_file(fresh, fx->shape);
    if (reuse) {
        unlink(fresh);
    } else {
        unlink(ok);
        uint64_t t0 = cuzk_now_ns();
        cuzk_rng rng;
        cuzk_rng_seed(&rng, 2048);
        struct g16_pk pk;
        ASSERT_OK(g16_setup(&pk, &s, &rng, pool_default(), err), err);
        /* with the digest cache: no subgroup check is paid for points made here */
        ASSERT_OK(g16_params_write_ex(&pk, fx->params, true, err), err);
        ASSERT_OK(g16_vk_write(&pk.vk, fx->vk, err), err);
        g16_pk_free(&pk);
        ASSERT(rename(fresh, fx->shape) == 0);
        fx->setup_s = (double)(cuzk_now_ns() - t0) / 1e9;
        int fd = open(ok, O_CREAT | O_WRONLY, 0666);
        ASSERT(fd >= 0);
        close(fd);
        printf("porep fixture: local setup of the 2 KiB circuit in %.1f s -> %s\n", fx->setup_s, fx->dir);
    }
    g16_shape_free(&s);
    flock(lfd, LOCK_UN);
    close(lfd);
}

#endif
