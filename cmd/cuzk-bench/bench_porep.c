/* bench_porep.c: PoRep C2 from the command line: "gen-vanilla porep" (synthetic C1 wrapper
 * JSON), "porep-witness" (witness-generation wall / CPU time per partition) and the porep path of
 * "prove" (bench_prove_porep: parse C1, witness, prove each partition, verify against the
 * public inputs recomputed from the C1's commitments). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "bench.h"
#include "cuzk/aggregate.h"
#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/groth16.h"
#include "cuzk/porep.h"
#include "cuzk/util.h"

int bench_prove_porep(int argc, char **argv);
int bench_gen_vanilla_snap(int argc, char **argv);
int bench_gen_vanilla_post(int argc, char **argv);   /* bench_post.c */
int bench_verify_snap(int argc, char **argv);        /* bench_snap.c */
int bench_verify_post(int argc, char **argv);        /* bench_post.c */

static double ms_since(uint64_t t0) { return (double)(cuzk_now_ns() - t0) / 1e6; }

static int read_file(char **out, size_t *len, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: read failed\n", path);
        fclose(f);
        free(b);
        return -1;
    }
    fclose(f);
    b[n] = 0;
    *out = b;
    *len = (size_t)n;
    return 0;
}

/* A seal proof from --proof NAME or, by default, the V1_1 proof of --sector-size (kind
 * FIL_POREP_SYNTHETIC / FIL_POREP_NI: that size's ..._Feat_SyntheticPoRep /
 * ..._V1_2_Feat_NonInteractivePoRep instead). */
static const struct fil_seal_proof *pick_proof(const char *name, const char *size_s, enum fil_porep_kind kind)
{
    struct cuzk_error err = {0};
    if (name) {
        const struct fil_seal_proof *p = fil_seal_proof_by_name(name);
        if (!p) fprintf(stderr, "unknown registered proof \"%s\"\n", name);
        return p;
    }
    uint64_t size;
    if (!size_s || porep_parse_sector_size(&size, size_s, &err)) {
        fprintf(stderr, "%s\n", size_s ? err.msg : "--sector-size SIZE is required");
        return NULL;
    }
    const struct fil_seal_proof *p = fil_seal_proof_default(size);
    for (size_t i = 0; p && kind != FIL_POREP_INTERACTIVE && i < fil_seal_proof_count(); i++) {
        const struct fil_seal_proof *q = fil_seal_proof_at(i);
        if (q->sector_size == size && q->kind == kind) return q;
    }
    if (!p) fprintf(stderr, "no PoRep for sector size %s\n", size_s);
    return p;
}

BENCH_CMD(gen_vanilla, "gen-vanilla",
          "gen-vanilla porep --sector-size SIZE -o FILE [--synthetic | --ni] [--proof NAME] [--seed S] "
          "[--miner ID] [--sector-num N]: consistent synthetic C1 wrapper JSON")
{
    const char *size_s = NULL, *outp = NULL, *name = NULL;
    uint64_t seed = 1, miner = 1000, sector_num = 1;
    enum fil_porep_kind kind = FIL_POREP_INTERACTIVE;
    if (argc >= 2 && !strcmp(argv[1], "snap")) return bench_gen_vanilla_snap(argc, argv);   /* bench_snap.c */
    if (argc >= 2 && (!strcmp(argv[1], "window-post") || !strcmp(argv[1], "winning-post")))
        return bench_gen_vanilla_post(argc, argv);   /* bench_post.c */
    if (argc < 2 || strcmp(argv[1], "porep")) goto usage;
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--synthetic") || !strcmp(o, "--ni")) {
            if (kind != FIL_POREP_INTERACTIVE) goto usage;
            kind = o[2] == 's' ? FIL_POREP_SYNTHETIC : FIL_POREP_NI;
            continue;
        }
        if (!v) goto usage;
        i++;
        if (!strcmp(o, "--sector-size")) size_s = v;
        else if (!strcmp(o, "-o") || !strcmp(o, "--out")) outp = v;
        else if (!strcmp(o, "--proof")) name = v;
        else if (!strcmp(o, "--seed")) seed = strtoull(v, NULL, 0);
        else if (!strcmp(o, "--miner")) miner = strtoull(v, NULL, 0);
        else if (!strcmp(o, "--sector-num")) sector_num = strtoull(v, NULL, 0);
        else goto usage;
    }
    if (!outp || (name && kind != FIL_POREP_INTERACTIVE)) goto usage;
    const struct fil_seal_proof *p = pick_proof(name, size_s, kind);
    if (!p) return 2;
    struct cuzk_error err = {0};
    struct fil_c1 c;
    uint64_t t0 = cuzk_now_ns();
    int rc = fil_c1_generate(&c, p, miner, sector_num, seed, &err);
    double gen_ms = ms_since(t0);
    char *js = NULL;
    size_t n = 0;
    t0 = cuzk_now_ns();
    if (!rc) rc = fil_c1_write_wrapper(&js, &n, &c, &err);
    double wr_ms = ms_since(t0);
    if (rc) {
        fprintf(stderr, "gen-vanilla: %s (%s)\n", err.msg, cuzk_errname(rc));
        return 1;
    }
    FILE *f = fopen(outp, "wb");
    if (!f || fwrite(js, 1, n, f) != n || fclose(f)) {
        perror(outp);
        return 1;
    }
    printf("%s: %s, %u partitions x %u challenges, %zu bytes (generate %.0f ms, JSON %.0f ms)\n", outp,
           p->name, c.partitions, c.challenges, n, gen_ms, wr_ms);
    cuzk_free(js);
    fil_c1_free(&c);
    return 0;
usage:
    fprintf(stderr, "usage: cuzk-bench gen-vanilla porep --sector-size SIZE -o FILE [--synthetic | --ni] "
                    "[--proof NAME] [--seed S] [--miner ID] [--sector-num N]\n"
                    "  SIZE: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB (default proof: StackedDrg<SIZE>V1_1)\n"
                    "  --synthetic: StackedDrg<SIZE>V1_1_Feat_SyntheticPoRep; --ni: "
                    "StackedDrg<SIZE>V1_2_Feat_NonInteractivePoRep\n"
                    "  (both derive their challenges from comm_r: a full SDR of the sector, up to 512MiB;\n"
                    "   --proof NAME names any registered proof instead)\n");
    return 2;
}

static int load_c1(struct fil_c1 *c, const char *path)
{
    char *buf;
    size_t n;
    if (read_file(&buf, &n, path)) return -1;
    struct cuzk_error err = {0};
    uint64_t t0 = cuzk_now_ns();
    int rc = fil_c1_parse_wrapper(c, buf, n, &err);
    free(buf);
    /* every partition's challenges before any proof: a C1 with the wrong ones is refused whole */
    if (!rc && (rc = fil_c1_check_challenges(c, &err))) fil_c1_free(c);
    if (rc) {
        fprintf(stderr, "%s: %s (%s)\n", path, err.msg, cuzk_errname(rc));
        return -1;
    }
    printf("c1          %10.1f ms  %s, sector %llu, %u partitions x %u challenges, %zu bytes\n", ms_since(t0),
           c->proof->name, (unsigned long long)c->sector_num, c->partitions, c->challenges, n);
    return 0;
}

/* The C1 request parse alone, as the daemon runs it before a PoRep job is enqueued: the
 * median of --reps parses of the same bytes, and the allocation meter's peak for one parse
 * (the share RPC_PARSE_FACTOR reserves is a multiple of the request's size). A file whose
 * first bytes name "Phase1Out" is Curio's wrapper, else a bare SealCommitPhase1Output. */
BENCH_CMD(c1_parse, "c1-parse", "c1-parse FILE [--reps N]: median C1 JSON parse time and metered peak")
{
    uint64_t reps = 5;
    if (argc != 2 && !(argc == 4 && !strcmp(argv[2], "--reps") && bench_parse_u64(&reps, argv[3]) &&
                       reps >= 1 && reps <= 1000)) {
        fprintf(stderr, "usage: cuzk-bench c1-parse FILE [--reps N]   (N: 1..1000, default 5)\n");
        return 2;
    }
    char *buf;
    size_t n;
    if (read_file(&buf, &n, argv[1])) return 1;
    const char *key = strstr(buf, "\"Phase1Out\"");
    bool wrapper = key && key - buf < 256;
    double *ms = malloc(reps * sizeof *ms);
    uint64_t peak = 0;
    struct fil_c1 c = {0};
    for (uint64_t r = 0; ms && r < reps; r++) {
        struct cuzk_error err = {0};
        struct cuzk_meter m;
        cuzk_meter_begin(&m, UINT64_MAX, 0);
        uint64_t t0 = cuzk_now_ns();
        int rc = wrapper ? fil_c1_parse_wrapper(&c, buf, n, &err) : fil_c1_parse_phase1(&c, buf, n, &err);
        ms[r] = ms_since(t0);
        cuzk_meter_end();
        if (rc) {
            fprintf(stderr, "%s: %s (%s)\n", argv[1], err.msg, cuzk_errname(rc));
            free(ms);
            free(buf);
            return 1;
        }
        peak = m.peak;
        if (r + 1 < reps) fil_c1_free(&c);
    }
    if (!ms) return free(buf), 1;
    printf("c1-parse %s: %s %s, %zu bytes: median %.1f ms of %llu, metered peak %.1f MiB (%.2f x the file)\n",
           argv[1], wrapper ? "wrapper" : "phase1", c.proof->name, n, bench_median(ms, reps), (unsigned long long)reps,
           (double)peak / (1 << 20), (double)peak / (double)n);
    fil_c1_free(&c);
    free(ms);
    free(buf);
    return 0;
}

static int porep_witness(fr_t **inputs, fr_t **aux, uint32_t *n_in, uint32_t *n_aux, const struct fil_c1 *c,
                         unsigned k, struct cuzk_error *err)
{
    return fil_porep_witness_values(inputs, aux, n_in, n_aux, c, k, err);
}

/* CPU seconds of the whole process (every thread, user + system). */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

/* One partition into vectors kept across partitions (as a prover with a pinned buffer pool
 * would): witness build + porep_witness_values. */
static int witness_reused(fr_t **in, fr_t **aux, uint32_t *n_in, uint32_t *n_aux, const struct fil_c1 *c,
                          unsigned k, struct pool *pool, struct cuzk_error *err)
{
    struct fil_porep_witness w;
    int rc = fil_porep_witness_build(&w, c, k, err);
    if (rc) return rc;
    struct porep_layout l;
    rc = porep_layout_get(&l, &w.cfg, err);
    if (!rc && !*aux) {
        *in = cuzk_malloc((size_t)l.n_inputs * sizeof **in);
        *aux = cuzk_malloc((size_t)l.n_aux * sizeof **aux);
        if (!*in || !*aux) rc = cuzk_fail(err, CUZK_E_NOMEM, "witness buffers");
        /* huge pages, as fil_porep_witness_values_ex asks for its own vectors */
        uintptr_t b = ((uintptr_t)*aux + 4095) & ~(uintptr_t)4095;
        uintptr_t e = ((uintptr_t)*aux + (size_t)l.n_aux * sizeof **aux) & ~(uintptr_t)4095;
        if (!rc && e > b) (void)madvise((void *)b, e - b, MADV_HUGEPAGE);
    }
    if (!rc) rc = porep_witness_values(*in, *aux, &w.cfg, &w.w, pool, err);
    *n_in = l.n_inputs;
    *n_aux = l.n_aux;
    fil_porep_witness_free(&w);
    return rc;
}

BENCH_CMD(porep_witness, "porep-witness",
          "porep-witness (--c1 FILE | --sector-size SIZE) [--partitions N] [--threads T] [--reuse] [--seq]: "
          "witness time per partition (wall and CPU)")
{
    const char *c1p = NULL, *size_s = NULL;
    unsigned max_parts = ~0u, threads = 0;
    bool reuse = false, seq = false;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--reuse")) { reuse = true; continue; }
        if (!strcmp(o, "--seq")) { seq = true; continue; }
        if (!v) goto usage;
        i++;
        if (!strcmp(o, "--c1")) c1p = v;
        else if (!strcmp(o, "--sector-size")) size_s = v;
        else if (!strcmp(o, "--partitions")) max_parts = (unsigned)strtoul(v, NULL, 0);
        else if (!strcmp(o, "--threads")) threads = (unsigned)strtoul(v, NULL, 0);
        else goto usage;
    }
    struct fil_c1 c;
    struct cuzk_error err = {0};
    /* --threads T: a private pool of T threads (1: the calling thread alone, no pool);
     * default: the library pool (CUZK_THREADS or all CPUs). */
    struct pool *own = NULL, *pool = pool_default();
    if (threads == 1) pool = NULL;
    else if (threads > 1 && !(pool = own = pool_new(threads, &err))) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    unsigned nthr = pool && !seq ? pool_size(pool) : 1;
    if (c1p) {
        if (load_c1(&c, c1p)) return 1;
    } else {
        const struct fil_seal_proof *p = pick_proof(NULL, size_s, FIL_POREP_INTERACTIVE);
        if (!p) return 2;
        uint64_t t0 = cuzk_now_ns();
        if (fil_c1_generate(&c, p, 1000, 1, 1, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        printf("generate    %10.1f ms  %s\n", ms_since(t0), p->name);
    }
    if (!seq) {
        /* the layout is counted once per process; shown apart from the per-partition times */
        struct porep_config cfg;
        struct porep_layout l;
        uint64_t t0 = cuzk_now_ns();
        if (porep_config_for_size(&cfg, c.sector_size, &err) || porep_layout_get(&l, &cfg, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        printf("layout      %10.1f ms  per challenge %u aux, %u inputs (once per process)\n", ms_since(t0),
               l.ch_aux, l.ch_inputs);
    }
    int rc = 0;
    fr_t *in = NULL, *aux = NULL;
    for (unsigned k = 0; k < c.partitions && k < max_parts && !rc; k++) {
        uint32_t ni = 0, na = 0;
        uint64_t t0 = cuzk_now_ns();
        double c0 = cpu_s();
        if (seq) {
            /* the sequential reference: one values-mode context, challenges in order */
            struct fil_porep_witness w;
            struct gcs cs;
            rc = fil_porep_witness_build(&w, &c, k, &err);
            if (!rc && !(rc = gcs_init(&cs, GCS_VALUES, NULL, &err))) {
                porep_synthesize(&cs, &w.cfg, &w.w);
                rc = gcs_status(&cs, &err);
                ni = cs.n_inputs;
                na = cs.n_aux;
                gcs_free(&cs);
            }
            fil_porep_witness_free(&w);
        } else if (reuse) {
            rc = witness_reused(&in, &aux, &ni, &na, &c, k, pool, &err);
        } else {
            rc = fil_porep_witness_values_ex(&in, &aux, &ni, &na, &c, k, pool, &err);
        }
        double wall = ms_since(t0), cpu = (cpu_s() - c0) * 1e3;
        if (!rc)
            printf("witness[%u] %10.1f ms  cpu %.1f ms, inputs %u, aux %u (%s, %u thread%s)\n", k, wall, cpu, ni,
                   na, seq ? "sequential, growing vectors" : reuse ? "buffers reused" : "fresh buffers", nthr,
                   nthr > 1 ? "s" : "");
        else fprintf(stderr, "partition %u: %s\n", k, err.msg);
        if (!reuse) {
            cuzk_free(in);
            cuzk_free(aux);
            in = aux = NULL;
        }
        fflush(stdout);
    }
    cuzk_free(in);
    cuzk_free(aux);
    pool_free(own);
    fil_c1_free(&c);
    return rc ? 1 : 0;
usage:
    fprintf(stderr, "usage: cuzk-bench porep-witness (--c1 FILE | --sector-size SIZE) [--partitions N] "
                    "[--threads T] [--reuse] [--seq]\n"
                    "  T: 1 = calling thread only; default: the library pool (CUZK_THREADS)\n"
                    "  --reuse: keep the witness vectors across partitions; --seq: the sequential reference\n");
    return 2;
}

int bench_prove_porep(int argc, char **argv)
{
    const char *c1p = NULL, *dir = NULL, *backend = "cpu";
    bool check = false;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--check")) { check = true; continue; }
        if (!v) goto usage;
        i++;
        if (!strcmp(o, "--c1")) c1p = v;
        else if (!strcmp(o, "--params-dir")) dir = v;
        else if (!strcmp(o, "--backend")) backend = v;
        else if (!strcmp(o, "--kind")) { if (strcmp(v, "porep")) goto usage; }
        else goto usage;
    }
    if (!c1p || !dir) goto usage;
    if (strcmp(backend, "cpu")) {
        fprintf(stderr, "cuzk-bench prove --kind porep: backend '%s' is not wired here (cpu)\n", backend);
        return 2;
    }
    struct fil_c1 c;
    if (load_c1(&c, c1p)) return 1;
    struct cuzk_error err = {0};
    char stem[256], path[4096];
    struct g16_pk pk;
    struct g16_shape s;
    memset(&pk, 0, sizeof pk);
    memset(&s, 0, sizeof s);
    int rc = fil_porep_param_stem(stem, sizeof stem, c.sector_size, &err);
    uint64_t t0 = cuzk_now_ns();
    if (!rc) {
        snprintf(path, sizeof path, "%s/%s.params", dir, stem);
        rc = g16_params_read(&pk, path, G16_VALIDATE_NONE, pool_default(), &err);
        if (!rc) printf("params      %10.1f ms  %s\n", ms_since(t0), path);
    }
    if (!rc) {
        t0 = cuzk_now_ns();
        snprintf(path, sizeof path, "%s/%s.shape", dir, stem);
        rc = g16_shape_load(&s, path, &err);
        if (!rc) printf("shape       %10.1f ms  %llu constraints, %u inputs, %u aux\n", ms_since(t0),
                        (unsigned long long)s.n_constraints, s.n_inputs, s.n_aux);
    }
    struct g16_pvk *pvk = NULL;
    if (!rc && !(pvk = g16_pvk_new(&pk.vk, &err))) rc = err.code ? err.code : CUZK_E_INTERNAL;
    size_t ni = fil_porep_num_inputs(c.proof);
    fr_t *pub = malloc(ni * sizeof *pub);
    uint8_t *bytes = malloc((size_t)c.partitions * G16_PROOF_BYTES);
    bool all_ok = !rc && pub && bytes;
    for (unsigned k = 0; k < c.partitions && all_ok; k++) {
        fr_t *in = NULL, *aux = NULL;
        uint32_t n_in = 0, n_aux = 0;
        t0 = cuzk_now_ns();
        rc = porep_witness(&in, &aux, &n_in, &n_aux, &c, k, &err);
        if (!rc && (n_in != s.n_inputs || n_aux != s.n_aux))
            rc = cuzk_fail(&err, CUZK_E_INTERNAL, "witness has %u inputs / %u aux, shape %u / %u", n_in, n_aux,
                           s.n_inputs, s.n_aux);
        if (!rc) printf("witness[%u] %10.1f ms\n", k, ms_since(t0));
        struct g16_assignment w = {in, aux};
        /* verify against inputs recomputed from the C1's commitments, not the witness; a
         * changed challenge must fail */
        if (!rc) rc = fil_porep_public_inputs(pub, c.proof, c.replica_id, c.comm_d, c.comm_r, c.seed, k, &err);
        char tag[16];
        snprintf(tag, sizeof tag, "[%u]", k);
        bool ok = false;
        if (!rc) rc = bench_prove_verify(tag, &s, &pk, pvk, &w, check, g16_backend_cpu, NULL, pub, ni, 3,
                                         bytes + (size_t)k * G16_PROOF_BYTES, &ok, &err);
        if (!ok) all_ok = false;
        if (rc) all_ok = false;
        cuzk_free(in);
        cuzk_free(aux);
        fflush(stdout);
    }
    if (rc) fprintf(stderr, "cuzk-bench prove --kind porep: %s: %s\n", cuzk_errname(rc), err.msg);
    if (all_ok) {
        printf("proof       %u x %d bytes: ", c.partitions, G16_PROOF_BYTES);
        for (int i = 0; i < 16; i++) printf("%02x", bytes[i]);
        printf("...\n");
    }
    printf("verified: %s\n", all_ok ? "yes" : "no");
    free(pub);
    free(bytes);
    g16_pvk_free(pvk);
    g16_pk_free(&pk);
    g16_shape_free(&s);
    fil_c1_free(&c);
    return all_ok ? 0 : 1;
usage:
    fprintf(stderr, "usage: cuzk-bench prove --backend cpu --kind porep --c1 FILE --params-dir DIR [--check]\n"
                    "  DIR from `cuzk-params setup --kind porep --sector-size SIZE --out DIR`\n");
    return 2;
}

/* An NI-PoRep aggregate (AggregateProof bytes, e.g. a daemon's aggregate_proof) checked apart
 * from the daemon: inputs of every partition recomputed from the C1, include SHA-256(comm_r),
 * the verifier's two points of each vector of srs_dir/v28-fil-inner-product-v1.srs. */
static int verify_aggregate(const struct fil_c1 *c, const struct g16_vk *vk, const char *aggp,
                            const char *srs_dir, struct cuzk_error *err)
{
    char *buf = NULL, path[4096];
    size_t n = 0, ni = fil_porep_num_inputs(c->proof);
    struct agg_srs srs;
    memset(&srs, 0, sizeof srs);
    struct agg_proof *ap = malloc(sizeof *ap);
    fr_t *pub = malloc((size_t)c->partitions * ni * sizeof *pub);
    int rc = ap && pub ? CUZK_OK : cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    if (!rc && read_file(&buf, &n, aggp)) rc = cuzk_fail(err, CUZK_E_IO, "%s: cannot read", aggp);
    if (!rc) rc = agg_proof_from_bytes(ap, (const uint8_t *)buf, n, err);
    for (unsigned k = 0; k < c->partitions && !rc; k++)
        rc = fil_porep_public_inputs(pub + (size_t)k * ni, c->proof, c->replica_id, c->comm_d,
                                     c->comm_r, c->seed, k, err);
    snprintf(path, sizeof path, "%s/%s", srs_dir, AGG_SRS_V28_NAME);
    if (!rc) rc = agg_srs_read(&srs, path, 2, true, NULL, err);
    struct agg_verifier_srs vs;
    if (!rc) rc = agg_srs_specialize(NULL, &vs, &srs, ap->nproofs, err);
    uint8_t inc[32];
    agg_seal_transcript_include(inc, (const uint8_t (*)[32])c->comm_r, NULL, 1);
    if (!rc && ap->nproofs != agg_target_len(c->partitions))
        rc = cuzk_fail(err, CUZK_E_FORMAT, "%s: an aggregate of %u proofs, the C1 has %u partitions "
                       "(expected %zu)", aggp, ap->nproofs, c->partitions, agg_target_len(c->partitions));
    if (!rc) rc = agg_verify(vk, &vs, pub, c->partitions, ni, ap, inc, 32, AGG_V2, 0, NULL, err);
    if (!rc) printf("aggregate: ok (%zu bytes, %u proofs for %u partitions)\n", n, ap->nproofs,
                    c->partitions);
    agg_srs_free(&srs);
    free(buf);
    free(pub);
    free(ap);
    return rc;
}

/* ---- verify: a PoRep C2 proof (e.g. one a daemon returned) checked apart from the prover,
 * against the .vk and public inputs recomputed from the C1 output; for NI-PoRep also (or only)
 * its aggregate; --kind snap: a SnapDeals update proof (bench_snap.c). ---- */
BENCH_CMD(verify, "verify",
          "verify --kind porep|ni-porep --c1 FILE --vk FILE [--proof FILE] [--aggregate FILE --srs DIR]: "
          "check a C2 proof (partitions x 192 bytes) and/or an NI-PoRep aggregate; "
          "verify --kind snap --vanilla FILE --vk FILE --proof FILE [--registered-proof N]: an update proof; "
          "verify --kind window-post|winning-post --vanilla FILE --vk FILE --proof FILE: a PoSt proof")
{
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--kind")) continue;
        if (!strcmp(argv[i + 1], "snap")) return bench_verify_snap(argc, argv);
        if (!strcmp(argv[i + 1], "window-post") || !strcmp(argv[i + 1], "winning-post"))
            return bench_verify_post(argc, argv);
    }
    const char *c1p = NULL, *vkp = NULL, *proofp = NULL, *aggp = NULL, *srsd = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *o = argv[i], *v = argv[i + 1];
        if (!strcmp(o, "--c1")) c1p = v;
        else if (!strcmp(o, "--vk")) vkp = v;
        else if (!strcmp(o, "--proof")) proofp = v;
        else if (!strcmp(o, "--aggregate")) aggp = v;
        else if (!strcmp(o, "--srs")) srsd = v;
        else if (!strcmp(o, "--kind")) { if (strcmp(v, "porep") && strcmp(v, "ni-porep")) goto usage; }
        else goto usage;
    }
    if (!c1p || !vkp || (!proofp && !aggp) || !aggp != !srsd || argc % 2 == 0) goto usage;
    struct fil_c1 c;
    if (load_c1(&c, c1p)) return 1;
    char *buf = NULL;
    size_t n = 0;
    struct cuzk_error err = {0};
    struct g16_vk vk;
    memset(&vk, 0, sizeof vk);
    struct g16_pvk *pvk = NULL;
    size_t ni = fil_porep_num_inputs(c.proof);
    fr_t *pub = malloc(ni * sizeof *pub);
    int rc = pub ? CUZK_OK : cuzk_fail(&err, CUZK_E_NOMEM, "public inputs");
    if (!rc && proofp && read_file(&buf, &n, proofp)) rc = cuzk_fail(&err, CUZK_E_IO, "%s: cannot read", proofp);
    if (!rc && proofp && n != (size_t)c.partitions * G16_PROOF_BYTES)
        rc = cuzk_fail(&err, CUZK_E_FORMAT, "%s: %zu bytes, expected %u partitions x %d", proofp, n,
                       c.partitions, G16_PROOF_BYTES);
    if (!rc) rc = g16_vk_read(&vk, vkp, &err);
    if (!rc && !(pvk = g16_pvk_new(&vk, &err))) rc = err.code ? err.code : CUZK_E_INTERNAL;
    unsigned good = 0;
    for (unsigned k = 0; k < c.partitions && !rc && proofp; k++) {
        struct g16_proof proof;
        rc = g16_proof_from_bytes(&proof, (const uint8_t *)buf + (size_t)k * G16_PROOF_BYTES, &err);
        if (!rc) rc = fil_porep_public_inputs(pub, c.proof, c.replica_id, c.comm_d, c.comm_r, c.seed, k, &err);
        if (rc) break;
        struct cuzk_error verr = {0};
        bool ok = g16_verify(pvk, &proof, pub, ni, &verr) == CUZK_OK;
        printf("partition %u: %s\n", k, ok ? "ok" : verr.msg);
        good += ok;
    }
    bool ok = !rc && (!proofp || good == c.partitions);
    if (ok && aggp) {
        rc = verify_aggregate(&c, &vk, aggp, srsd, &err);
        if (rc) printf("aggregate: refused\n");
        ok = !rc;
    }
    if (rc) fprintf(stderr, "cuzk-bench verify: %s: %s\n", cuzk_errname(rc), err.msg);
    if (proofp)
        printf("verified: %s (%u of %u partitions%s)\n", ok ? "yes" : "no", good, c.partitions,
               aggp ? " and the aggregate" : "");
    else
        printf("verified: %s (the aggregate of %u partitions)\n", ok ? "yes" : "no", c.partitions);
    free(buf);
    free(pub);
    g16_pvk_free(pvk);
    g16_vk_free(&vk);
    fil_c1_free(&c);
    return ok ? 0 : 1;
usage:
    fprintf(stderr, "usage: cuzk-bench verify --kind porep|ni-porep --c1 FILE --vk FILE [--proof FILE]\n"
                    "                         [--aggregate FILE --srs DIR]   (at least one of --proof, --aggregate;\n"
                    "                         DIR holds v28-fil-inner-product-v1.srs)\n"
                    "       cuzk-bench verify --kind snap --vanilla FILE --vk FILE --proof FILE [--registered-proof N]\n"
                    "       cuzk-bench verify --kind window-post|winning-post --vanilla FILE --vk FILE --proof FILE\n"
                    "                         [--randomness HEX] [--miner-id ID] [--registered-proof N] [--partition K]\n");
    return 2;
}
