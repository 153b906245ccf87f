/* srs.c: `cuzk-params srs --n N --out DIR [--seed S]` writes a local SnarkPack inner-product SRS
 * for up to N proofs as DIR/v28-fil-inner-product-v1.srs (the name and format the daemon and
 * rust-fil-proofs load; NOT FOR PRODUCTION: alpha and beta follow from the seed);
 * `cuzk-params srs --check FILE` reads a .srs as rust-fil-proofs does (the first 32769 points of
 * each vector, curve and subgroup checked) and prints its vector lengths. docs/formats.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cuzk/aggregate.h"
#include "cuzk/util.h"

int params_cmd_srs(int argc, char **argv);

static int srs_usage(const char *why, const char *arg)
{
    fprintf(stderr, "cuzk-params srs: ");
    fprintf(stderr, why, arg);
    fprintf(stderr, "\nusage: cuzk-params srs --n N --out DIR [--seed S]\n"
                    "       cuzk-params srs --check FILE\n");
    return 2;
}

int params_cmd_srs(int argc, char **argv)
{
    const char *out = NULL, *check = NULL;
    unsigned long long n = 0, seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return srs_usage("%s needs a value", o);
        char *end;
        errno = 0;
        if (!strcmp(o, "--out")) {
            out = v;
        } else if (!strcmp(o, "--check")) {
            check = v;
        } else if (!strcmp(o, "--n") || !strcmp(o, "--seed")) {
            unsigned long long x = strtoull(v, &end, 0);
            if (errno || !*v || *end || *v == '-') return srs_usage("not a number: \"%s\"", v);
            if (!strcmp(o, "--n")) n = x; else seed = x;
        } else {
            return srs_usage("unknown option %s", o);
        }
        i++;
    }
    struct cuzk_error err;
    struct agg_srs srs;
    uint64_t t0 = cuzk_now_ns();
    if (check) {
        int rc = agg_srs_read(&srs, check, AGG_SRS_FIL_MAX_LEN, true, NULL, &err);
        if (rc) {
            fprintf(stderr, "cuzk-params srs: %s: %s\n", cuzk_errname(rc), err.msg);
            return 1;
        }
        printf("%s: g_alpha %zu, g_beta %zu, h_alpha %zu, h_beta %zu points read and checked "
               "(%.1f s); aggregates of up to %zu proofs\n",
               check, srs.n_g_alpha, srs.n_g_beta, srs.n_h_alpha, srs.n_h_beta,
               (double)(cuzk_now_ns() - t0) / 1e9, srs.n_g_alpha / 2);
        agg_srs_free(&srs);
        return 0;
    }
    if (!out || !n) return srs_usage("--n and --out are required%s", "");
    size_t target = agg_target_len((size_t)n);
    if (!target || target > AGG_SRS_MAX_SIZE / 2) {
        char b[32];
        snprintf(b, sizeof b, "%llu", n);
        return srs_usage("--n %s is outside [1, 2^19]", b);
    }
    if (mkdir(out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "cuzk-params srs: %s: %s\n", out, strerror(errno));
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out, AGG_SRS_V28_NAME);
    int rc = agg_srs_generate(&srs, target, seed, NULL, &err);
    if (!rc) rc = agg_srs_write(&srs, path, &err);
    if (rc) {
        fprintf(stderr, "cuzk-params srs: %s: %s\n", cuzk_errname(rc), err.msg);
        agg_srs_free(&srs);
        return 1;
    }
    printf("%s: local SRS for up to %zu proofs (%zu powers of each kind), %.1f s; NOT FOR "
           "PRODUCTION\n",
           path, target, 2 * target, (double)(cuzk_now_ns() - t0) / 1e9);
    agg_srs_free(&srs);
    return 0;
}
