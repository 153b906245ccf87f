/* setup_porep.c: `cuzk-params setup --kind porep --sector-size SIZE --out DIR [--seed S]`:
 * local trusted setup of one PoRep partition circuit, written under the v28 names
 * (DIR/v28-stacked-proof-of-replication-…{.params,.vk,.shape}) so that a prover pointed at DIR
 * finds it as it would the real parameter cache. NOT FOR PRODUCTION. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/groth16.h"
#include "cuzk/porep.h"
#include "cuzk/util.h"

int params_cmd_setup_porep(int argc, char **argv);

static int setup_usage(FILE *f)
{
    fprintf(f, "usage: cuzk-params setup --kind porep --sector-size SIZE --out DIR [--seed S]\n"
               "  SIZE: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB (one partition's circuit; the same for\n"
               "  V1, V1_1, synthetic and NI PoRep). Writes DIR/<v28 name>.params, .vk and .shape.\n"
               "  NOT FOR PRODUCTION: the toxic waste is known to this process.\n");
    return f == stderr ? 2 : 0;
}

static double secs_since(uint64_t t0) { return (double)(cuzk_now_ns() - t0) / 1e9; }

int params_cmd_setup_porep(int argc, char **argv)
{
    const char *size_s = NULL, *out = NULL;
    uint64_t seed = 0;
    bool have_seed = false;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) return setup_usage(stdout);
        if (!v) {
            fprintf(stderr, "setup: %s needs a value\n", o);
            return setup_usage(stderr);
        }
        i++;
        if (!strcmp(o, "--kind") || !strcmp(o, "--circuit")) {
            if (strcmp(v, "porep")) return setup_usage(stderr);
        } else if (!strcmp(o, "--sector-size")) {
            size_s = v;
        } else if (!strcmp(o, "--out")) {
            out = v;
        } else if (!strcmp(o, "--seed")) {
            char *end;
            seed = strtoull(v, &end, 0);
            if (*end || end == v) {
                fprintf(stderr, "setup: --seed: expected an integer, got \"%s\"\n", v);
                return 2;
            }
            have_seed = true;
        } else {
            fprintf(stderr, "setup: unknown option %s\n", o);
            return setup_usage(stderr);
        }
    }
    if (!size_s || !out) return setup_usage(stderr);
    struct cuzk_error err = {0};
    uint64_t size;
    struct porep_config cfg;
    char stem[256], path[4096];
    if (porep_parse_sector_size(&size, size_s, &err) || porep_config_for_size(&cfg, size, &err) ||
        fil_porep_param_stem(stem, sizeof stem, size, &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        return 2;
    }
    fprintf(stderr, "cuzk-params: WARNING: not for production: the toxic waste is known to this process\n");
    if (mkdir(out, 0777) && errno != EEXIST) {
        fprintf(stderr, "cuzk-params: setup: %s: %s\n", out, strerror(errno));
        return 1;
    }
    uint64_t t0 = cuzk_now_ns();
    struct g16_shape s;
    struct g16_pk pk;
    memset(&s, 0, sizeof s);
    memset(&pk, 0, sizeof pk);
    struct g16_builder *b = g16_builder_new(false, &err);
    int rc = b ? CUZK_OK : err.code;
    if (!rc) {
        struct gcs_sink sink = gcs_sink_builder(b);
        struct gcs cs;
        rc = gcs_init(&cs, GCS_SHAPE, &sink, &err);
        if (!rc) {
            porep_synthesize(&cs, &cfg, NULL);
            rc = gcs_status(&cs, &err);
            gcs_free(&cs);
        }
        if (!rc) rc = g16_builder_finish(b, &s, &err);
        g16_builder_free(b);
    }
    if (!rc) printf("shape: %llu constraints, %u inputs, %u aux (%.1f s)\n",
                    (unsigned long long)s.n_constraints, s.n_inputs, s.n_aux, secs_since(t0));
    fflush(stdout);
    cuzk_rng rng;
    if (have_seed) cuzk_rng_seed(&rng, seed);
    uint64_t t1 = cuzk_now_ns();
    if (!rc) rc = g16_setup(&pk, &s, have_seed ? &rng : NULL, pool_default(), &err);
    if (!rc) printf("setup: %.1f s\n", secs_since(t1));
    static const char *ext[3] = {"params", "vk", "shape"};
    for (int k = 0; k < 3 && !rc; k++) {
        snprintf(path, sizeof path, "%s/%s.%s", out, stem, ext[k]);
        rc = k == 0 ? g16_params_write(&pk, path, &err)
           : k == 1 ? g16_vk_write(&pk.vk, path, &err)
                    : g16_shape_save(&s, path, &err);
        if (!rc) printf("wrote %s\n", path);
    }
    if (rc) fprintf(stderr, "cuzk-params: setup: %s (%s)\n", err.msg, cuzk_errname(rc));
    else printf("not for production: the toxic waste is known to this process\n");
    g16_pk_free(&pk);
    g16_shape_free(&s);
    return rc ? 1 : 0;
}
