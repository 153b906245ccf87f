/* bench_post.c: WindowPoSt / WinningPoSt from the command line: "gen-vanilla window-post|
 * winning-post" (consistent synthetic FallbackPoStSectorProofs in the cuzk-bench vanilla file
 * format), the PoSt path of "prove" (bench_prove_post: parse, native check, parallel witness,
 * prove, and verify against public inputs recomputed from the sectors' (id, comm_r) and the
 * randomness alone) and "post-witness" (generation, parse, check and witness times of a
 * request, wall and CPU). Dispatched from bench_porep.c (gen-vanilla) and bench_prove.c
 * (prove --kind window-post|winning-post). The defaults of gen-vanilla and prove are the same
 * (randomness 32 zero bytes and miner 1000 as `cuzk-bench single`, registered proof V1_1 (Go
 * numbering) for WindowPoSt, partition 0), so a generated file proves with no more flags. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"
#include "cuzk/fil_circuit.h"
#include "cuzk/filecoin.h"
#include "cuzk/gpu.h"
#include "cuzk/groth16.h"
#include "cuzk/porep.h"
#include "cuzk/post_gen.h"
#include "cuzk/util.h"
#include "cuzk/vanilla.h"

int bench_gen_vanilla_post(int argc, char **argv);
int bench_prove_post(int argc, char **argv);
int bench_verify_post(int argc, char **argv);

static double ms_since(uint64_t t0) { return (double)(cuzk_now_ns() - t0) / 1e6; }

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

/* The registered proof (Go numbering) for kind at size: WindowPoSt V1_1 (Rust V1_2, what
 * Curio proves with), WinningPoSt V1. */
static const struct fil_post_proof *default_proof(enum post_kind k, uint64_t size)
{
    for (size_t i = 0; i < fil_post_proof_count(); i++) {
        const struct fil_post_proof *p = fil_post_proof_at(i);
        if (p->kind == k && p->sector_size == size && (k == POST_WINNING || p->api == FIL_API_1_2)) return p;
    }
    return NULL;
}

/* --registered-proof / --sector-size into a proof of kind k (either may be absent). */
static const struct fil_post_proof *pick_proof(enum post_kind k, uint64_t reg, uint64_t size, const char *cmd)
{
    const struct fil_post_proof *p = reg != ~0ull ? fil_post_proof_by_id(reg) : default_proof(k, size);
    if (!p || p->kind != k || (size && p->sector_size != size)) {
        if (reg != ~0ull)
            fprintf(stderr, "%s: registered proof %llu is %s, not a %s proof%s\n", cmd, (unsigned long long)reg,
                    p ? p->go_name : "unknown", post_kind_name(k), size ? " of that sector size" : "");
        else
            fprintf(stderr, "%s: no %s proof for sector size %llu (2KiB, 8MiB, 512MiB, 32GiB, 64GiB)\n", cmd,
                    post_kind_name(k), (unsigned long long)size);
        return NULL;
    }
    return p;
}

static int write_vanilla(const char *path, uint8_t *const *blob, size_t n, size_t len)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fputc('[', f) != EOF;
    for (size_t i = 0; i < n && ok; i++) {
        size_t bn;
        char *b64 = fil_base64_encode(blob[i], len, &bn);
        ok = b64 && fprintf(f, "%s\"", i ? "," : "") > 0 && fwrite(b64, 1, bn, f) == bn && fputc('"', f) != EOF;
        cuzk_free(b64);
    }
    if (ok) ok = fputs("]\n", f) != EOF;
    if (f && fclose(f)) ok = false;
    return ok ? 0 : -1;
}

/* ---------------------------------------------------------- gen-vanilla -- */

struct post_opts {
    enum post_kind kind;
    uint64_t size, reg, miner, seed, sectors;
    unsigned partition;
    uint8_t randomness[32];
    const char *out, *vanilla, *params, *backend;
    bool check;
    unsigned threads;
};

/* Shared flags; returns 0, or 2 on a usage error (message printed). */
static int post_flags(struct post_opts *o, int argc, char **argv, int first, const char *cmd)
{
    for (int i = first; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t u;
        if (!strcmp(a, "--check")) { o->check = true; continue; }
        if (!v) { fprintf(stderr, "%s: %s needs a value\n", cmd, a); return 2; }
        i++;
        if (!strcmp(a, "--kind")) {
            if (post_parse_kind(&o->kind, v, NULL)) { fprintf(stderr, "%s: --kind %s\n", cmd, v); return 2; }
        } else if (!strcmp(a, "--sector-size")) {
            struct cuzk_error err = {0};
            if (porep_parse_sector_size(&o->size, v, &err)) { fprintf(stderr, "%s: %s\n", cmd, err.msg); return 2; }
        } else if (!strcmp(a, "--randomness")) {
            if (!bench_parse_hex32(o->randomness, v)) { fprintf(stderr, "%s: --randomness: expected 64 hex digits\n", cmd); return 2; }
        } else if (!strcmp(a, "-o") || !strcmp(a, "--out")) o->out = v;
        else if (!strcmp(a, "--vanilla")) o->vanilla = v;
        else if (!strcmp(a, "--params-dir")) o->params = v;
        else if (!strcmp(a, "--backend")) o->backend = v;
        else if (bench_parse_u64(&u, v) && !strcmp(a, "--miner-id")) o->miner = u;
        else if (bench_parse_u64(&u, v) && !strcmp(a, "--registered-proof")) o->reg = u;
        else if (bench_parse_u64(&u, v) && !strcmp(a, "--seed")) o->seed = u;
        else if (bench_parse_u64(&u, v) && !strcmp(a, "--sectors") && u) o->sectors = u;
        else if (bench_parse_u64(&u, v) && !strcmp(a, "--partition") && u < 1u << 31) o->partition = (unsigned)u;
        else if (bench_parse_u64(&u, v) && !strcmp(a, "--threads") && u < 1024) o->threads = (unsigned)u;
        else { fprintf(stderr, "%s: unknown option or bad value: %s %s\n", cmd, a, v); return 2; }
    }
    return 0;
}

static void opts_default(struct post_opts *o)
{
    memset(o, 0, sizeof *o);
    o->reg = ~0ull;
    o->miner = 1000;
    o->seed = 1;
    o->backend = "cpu";
}

int bench_gen_vanilla_post(int argc, char **argv)
{
    struct post_opts o;
    opts_default(&o);
    enum post_kind k;
    if (argc < 2 || post_parse_kind(&k, argv[1], NULL) || post_flags(&o, argc, argv, 2, "gen-vanilla")) goto usage;
    o.kind = k;
    if (!o.out || (!o.size && o.reg == ~0ull)) goto usage;
    const struct fil_post_proof *p = pick_proof(k, o.reg, o.size, "gen-vanilla");
    if (!p) return 2;
    if (!o.sectors) o.sectors = k == POST_WINNING ? 16 : p->sector_count;
    struct cuzk_error err = {0};
    struct fil_post_gen g;
    uint64_t t0 = cuzk_now_ns();
    if (fil_post_generate(&g, p, o.randomness, o.miner, o.sectors, o.partition, o.seed, pool_default(), &err)) {
        fprintf(stderr, "gen-vanilla %s: %s (%s)\n", post_kind_name(k), err.msg, cuzk_errname(err.code));
        return 1;
    }
    double gen_ms = ms_since(t0);
    if (write_vanilla(o.out, g.blob, g.n, g.len)) {
        fprintf(stderr, "gen-vanilla: cannot write %s\n", o.out);
        fil_post_gen_free(&g);
        return 1;
    }
    printf("%s: %s (registered proof %llu), %zu sector proof%s x %zu bytes, generated in %.0f ms (%u threads)\n",
           o.out, p->go_name, (unsigned long long)p->id, g.n, g.n == 1 ? "" : "s", g.len, gen_ms,
           pool_size(pool_default()));
    if (k == POST_WINNING)
        printf("proving set of %llu sectors (ids 1..%llu): challenged position %llu, sector id %llu\n",
               (unsigned long long)g.set_len, (unsigned long long)g.set_len, (unsigned long long)g.selected,
               (unsigned long long)g.sector_id[0]);
    else
        printf("partition %u: sector ids %llu..%llu\n", o.partition, (unsigned long long)g.sector_id[0],
               (unsigned long long)g.sector_id[g.n - 1]);
    char hex[65];
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", o.randomness[i]);
    printf("send: cuzk-bench single -t %s --registered-proof %llu --vanilla %s --randomness %s --miner-id %llu%s\n",
           k == POST_WINNING ? "winning" : "wpost", (unsigned long long)p->id, o.out, hex,
           (unsigned long long)o.miner, o.partition ? " --partition N" : "");
    fil_post_gen_free(&g);
    return 0;
usage:
    fprintf(stderr, "usage: cuzk-bench gen-vanilla window-post|winning-post --sector-size SIZE -o FILE [--sectors N]\n"
                    "         [--randomness HEX] [--miner-id ID] [--registered-proof N] [--partition K] [--seed S]\n"
                    "  SIZE: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB (or --registered-proof alone, Go numbering 0-14)\n"
                    "  window-post: N sectors of partition K (default a full partition); winning-post: the\n"
                    "  challenged sector of a proving set of N (default 16). Defaults: randomness 0, miner 1000,\n"
                    "  WindowPoSt V1_1 (10-14). Writes FILE: a JSON array of base64 FallbackPoStSectorProofs.\n");
    return 2;
}

/* ------------------------------------------------------------ load files -- */

struct post_file {
    const struct fil_post_proof *p;
    struct post_config cfg;
    size_t n;
    uint8_t **blob;
    size_t *len;
};

static void post_file_free(struct post_file *f)
{
    for (size_t i = 0; i < f->n; i++) cuzk_free(f->blob[i]);
    free(f->blob);
    free(f->len);
    memset(f, 0, sizeof *f);
}

/* The vanilla file; the proof from --registered-proof, else from the blob size (every size
 * and kind has its own) with the default variant. */
static int load_post(struct post_file *f, const struct post_opts *o)
{
    json_error_t je;
    json_t *arr = json_load_file(o->vanilla, 0, &je);
    if (!json_is_array(arr) || json_array_size(arr) == 0) {
        fprintf(stderr, "%s: not a JSON array of base64 strings (%s)\n", o->vanilla, arr ? "empty" : je.text);
        json_decref(arr);
        return -1;
    }
    f->n = json_array_size(arr);
    f->blob = calloc(f->n, sizeof *f->blob);
    f->len = calloc(f->n, sizeof *f->len);
    struct cuzk_error err = {0};
    for (size_t i = 0; i < f->n; i++) {
        const char *b = json_string_value(json_array_get(arr, i));
        if (!f->blob || !f->len || !b || fil_base64_decode(&f->blob[i], &f->len[i], b, strlen(b), &err)) {
            fprintf(stderr, "%s: element %zu: %s\n", o->vanilla, i, b ? err.msg : "not a string");
            json_decref(arr);
            return -1;
        }
    }
    json_decref(arr);
    if (o->reg != ~0ull) {
        f->p = pick_proof(o->kind, o->reg, 0, "prove");
    } else {
        for (size_t i = 0; i < fil_post_proof_count() && !f->p; i++) {
            const struct fil_post_proof *q = default_proof(o->kind, fil_post_proof_at(i)->sector_size);
            struct post_config c;
            if (q && !fil_post_circuit_config(&c, q, NULL) && fil_post_sector_proof_size(&c) == f->len[0]) f->p = q;
        }
        if (!f->p)
            fprintf(stderr, "%s: %zu-byte sector proofs are no %s size (give --registered-proof)\n", o->vanilla,
                    f->len[0], post_kind_name(o->kind));
    }
    return f->p && !fil_post_circuit_config(&f->cfg, f->p, NULL) ? 0 : -1;
}

/* Parse every blob and run the native check; prints the times. */
static int parse_check(struct fil_post_sector_proof *sp, const struct post_file *f, const struct post_opts *o,
                       struct pool *pool, struct cuzk_error *err)
{
    uint64_t t0 = cuzk_now_ns();
    for (size_t i = 0; i < f->n; i++) {
        int rc = fil_post_sector_proof_parse(&sp[i], &f->cfg, f->blob[i], f->len[i], (unsigned)i, err);
        if (rc) return rc;
    }
    double parse_ms = ms_since(t0);
    t0 = cuzk_now_ns();
    double c0 = cpu_s();
    int rc = fil_post_request_check(f->p, sp, f->n, o->randomness, o->partition, pool, err);
    if (!rc) printf("parse       %10.1f ms  %zu sector proofs; check %.1f ms (cpu %.1f ms: challenges, paths, comm_r)\n",
                    parse_ms, f->n, ms_since(t0), (cpu_s() - c0) * 1e3);
    return rc;
}

/* ----------------------------------------------------------------- prove -- */

int bench_prove_post(int argc, char **argv)
{
    struct post_opts o;
    opts_default(&o);
    if (post_flags(&o, argc, argv, 1, "prove")) goto usage;
    if (!o.vanilla || !o.params) goto usage;
    void *bctx = NULL;
    g16_backend_fn be = g16_backend_cpu;
    struct cuzk_error err = {0};
    if (!strcmp(o.backend, "gpu")) {
        struct gpu_ctx *g = NULL;
        if (gpu_ctx_new(&g, 0, &err)) {
            fprintf(stderr, "cuzk-bench prove: backend gpu: %s\n", err.msg);
            return 2;
        }
        bctx = g;
        be = gpu_g16_backend;
    } else if (strcmp(o.backend, "cpu")) {
        fprintf(stderr, "cuzk-bench prove: unknown backend '%s' (cpu, gpu)\n", o.backend);
        return 2;
    }
    struct post_file f;
    memset(&f, 0, sizeof f);
    uint64_t t0 = cuzk_now_ns();
    if (load_post(&f, &o)) {
        post_file_free(&f);
        return 1;
    }
    printf("vanilla     %10.1f ms  %s (registered proof %llu), %zu sector proof%s\n", ms_since(t0), f.p->go_name,
           (unsigned long long)f.p->id, f.n, f.n == 1 ? "" : "s");
    struct fil_circuit circ;
    char stem[256], path[4096];
    struct g16_pk pk;
    struct g16_shape sh;
    memset(&pk, 0, sizeof pk);
    memset(&sh, 0, sizeof sh);
    int rc = fil_circuit_init(&circ, o.kind == POST_WINNING ? FIL_CIRCUIT_WINNING_POST : FIL_CIRCUIT_WINDOW_POST,
                              f.p->sector_size, &err);
    if (!rc) rc = fil_circuit_param_stem(stem, sizeof stem, &circ, &err);
    if (!rc) {
        t0 = cuzk_now_ns();
        snprintf(path, sizeof path, "%s/%s.params", o.params, stem);
        rc = g16_params_read(&pk, path, G16_VALIDATE_NONE, pool_default(), &err);
        if (!rc) printf("params      %10.1f ms  %s\n", ms_since(t0), path);
    }
    if (!rc) {
        t0 = cuzk_now_ns();
        snprintf(path, sizeof path, "%s/%s.shape", o.params, stem);
        rc = g16_shape_load(&sh, path, &err);
        if (!rc) printf("shape       %10.1f ms  %llu constraints, %u inputs, %u aux\n", ms_since(t0),
                        (unsigned long long)sh.n_constraints, sh.n_inputs, sh.n_aux);
    }
    struct g16_pvk *pvk = NULL;
    if (!rc && !(pvk = g16_pvk_new(&pk.vk, &err))) rc = err.code ? err.code : CUZK_E_INTERNAL;
    struct fil_post_sector_proof *sp = calloc(f.n, sizeof *sp);
    size_t ni = fil_post_num_inputs(f.p) - 1;
    fr_t *pub = malloc(ni * sizeof *pub), *in = NULL, *aux = NULL;
    fr_t *cr = malloc(f.n * sizeof *cr);
    uint64_t *ids = malloc(f.n * sizeof *ids);
    if (!rc && (!sp || !pub || !cr || !ids)) rc = cuzk_fail(&err, CUZK_E_NOMEM, "out of memory");
    if (!rc) rc = parse_check(sp, &f, &o, pool_default(), &err);
    uint32_t n_in = 0, n_aux = 0;
    t0 = cuzk_now_ns();
    if (!rc) rc = fil_post_witness_values(&in, &aux, &n_in, &n_aux, &f.cfg, sp, f.n, pool_default(), &err);
    if (!rc && (n_in != sh.n_inputs || n_aux != sh.n_aux))
        rc = cuzk_fail(&err, CUZK_E_INTERNAL, "witness has %u inputs / %u aux, shape %u / %u", n_in, n_aux,
                       sh.n_inputs, sh.n_aux);
    if (!rc) printf("witness     %10.1f ms\n", ms_since(t0));
    struct g16_assignment w = {in, aux};
    /* verify against inputs recomputed from the sectors' (id, comm_r) and the randomness; a
     * changed challenged leaf must fail */
    for (size_t i = 0; !rc && i < f.n; i++) {
        ids[i] = sp[i].sector_id;
        cr[i] = sp[i].comm_r;
    }
    if (!rc) rc = fil_post_request_inputs(pub, f.p, o.randomness, ids, cr, f.n, o.partition, &err);
    bool ok = false;
    uint8_t bytes[G16_PROOF_BYTES];
    if (!rc) rc = bench_prove_verify("", &sh, &pk, pvk, &w, o.check, be, bctx, pub, ni, 1, bytes, &ok, &err);
    if (!rc) {
        printf("proof       %d bytes: ", G16_PROOF_BYTES);
        for (int i = 0; i < 16; i++) printf("%02x", bytes[i]);
        printf("...\n");
    }
    if (rc) fprintf(stderr, "cuzk-bench prove --kind %s: %s: %s\n", post_kind_name(o.kind), cuzk_errname(rc),
                    err.msg);
    printf("verified: %s\n", ok ? "yes" : "no");
    if (sp)
        for (size_t i = 0; i < f.n; i++) fil_post_sector_proof_free(&sp[i]);
    free(sp);
    free(pub);
    free(cr);
    free(ids);
    cuzk_free(in);
    cuzk_free(aux);
    g16_pvk_free(pvk);
    g16_pk_free(&pk);
    g16_shape_free(&sh);
    post_file_free(&f);
    return ok ? 0 : 1;
usage:
    fprintf(stderr, "usage: cuzk-bench prove --backend cpu|gpu --kind window-post|winning-post --vanilla FILE\n"
                    "         --params-dir DIR [--randomness HEX] [--miner-id ID] [--registered-proof N]\n"
                    "         [--partition K] [--check]\n"
                    "  defaults as gen-vanilla's (randomness 0, miner 1000, partition 0, the proof from the blob size)\n"
                    "  DIR from `cuzk-params setup --kind window-post|winning-post --sector-size SIZE --out DIR`\n");
    return 2;
}

/* ---------------------------------------------------------------- verify -- */

/* verify --kind window-post|winning-post: a PoSt proof (e.g. the one a daemon returned,
 * `cuzk-bench single --proof-out`) checked apart from the prover, against the .vk and the
 * public inputs the verifier derives (fil_post_public_inputs) from the vanilla file's sectors
 * ((sector id, comm_r) as the chain would list them) and the randomness; nothing of the
 * witness is used. Dispatched from `verify` in bench_porep.c. */
int bench_verify_post(int argc, char **argv)
{
    struct post_opts o;
    opts_default(&o);
    const char *vkp = NULL, *proofp = NULL;
    /* --vk and --proof are this command's; the rest are the shared PoSt flags */
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    if (!rest) return 1;
    rest[nrest++] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--vk")) vkp = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--proof")) proofp = argv[++i];
        else rest[nrest++] = argv[i];
    }
    int fl = post_flags(&o, nrest, rest, 1, "verify");
    free(rest);
    if (fl || !o.vanilla || !vkp || !proofp) {
        fprintf(stderr, "usage: cuzk-bench verify --kind window-post|winning-post --vanilla FILE --vk FILE --proof FILE\n"
                        "         [--randomness HEX] [--miner-id ID] [--registered-proof N] [--partition K]\n"
                        "  FILE (--proof): the 192-byte proof; defaults as gen-vanilla's (randomness 0, miner 1000,\n"
                        "  partition 0, the proof from the blob size)\n");
        return 2;
    }
    struct post_file f;
    memset(&f, 0, sizeof f);
    if (load_post(&f, &o)) {
        post_file_free(&f);
        return 1;
    }
    struct cuzk_error err = {0};
    struct g16_vk vk;
    memset(&vk, 0, sizeof vk);
    struct g16_pvk *pvk = NULL;
    size_t ni = fil_post_num_inputs(f.p);
    fr_t *pub = malloc(ni * sizeof *pub);
    uint64_t *ids = malloc(f.n * sizeof *ids);
    uint8_t(*cr)[32] = malloc(f.n * sizeof *cr);
    int rc = pub && ids && cr ? CUZK_OK : cuzk_fail(&err, CUZK_E_NOMEM, "out of memory");
    /* the sectors' ids and comm_r, as the verifier's list of them */
    for (size_t i = 0; i < f.n && !rc; i++) {
        struct fil_post_sector_proof sp;
        rc = fil_post_sector_proof_parse(&sp, &f.cfg, f.blob[i], f.len[i], (unsigned)i, &err);
        if (rc) break;
        ids[i] = sp.sector_id;
        fr_to_bytes_le(cr[i], &sp.comm_r);
        fil_post_sector_proof_free(&sp);
    }
    uint8_t prover_id[32];
    fil_prover_id(prover_id, o.miner);
    if (!rc) rc = fil_post_public_inputs(pub, f.p, o.randomness, prover_id, ids, (const uint8_t(*)[32])cr, f.n,
                                         o.partition, &err);
    uint8_t bytes[G16_PROOF_BYTES + 1];
    size_t n = 0;
    FILE *pf = rc ? NULL : fopen(proofp, "rb");
    if (!rc && !pf) rc = cuzk_fail(&err, CUZK_E_IO, "%s: cannot open: %s", proofp, strerror(errno));
    if (pf) {
        n = fread(bytes, 1, sizeof bytes, pf);   /* one byte more: a longer file is refused */
        fclose(pf);
        if (n > G16_PROOF_BYTES)
            rc = cuzk_fail(&err, CUZK_E_FORMAT, "%s: longer than one %d-byte proof", proofp, G16_PROOF_BYTES);
        else if (n < G16_PROOF_BYTES)
            rc = cuzk_fail(&err, CUZK_E_FORMAT, "%s: %zu bytes, expected one %d-byte proof", proofp, n,
                           G16_PROOF_BYTES);
    }
    struct g16_proof proof;
    if (!rc) rc = g16_proof_from_bytes(&proof, bytes, &err);
    if (!rc) rc = g16_vk_read(&vk, vkp, &err);
    if (!rc && !(pvk = g16_pvk_new(&vk, &err))) rc = err.code ? err.code : CUZK_E_INTERNAL;
    bool ok = false;
    if (!rc) {
        rc = g16_verify(pvk, &proof, pub + 1, ni - 1, &err);   /* pub[0] is ONE */
        ok = rc == CUZK_OK;
    }
    if (rc) fprintf(stderr, "cuzk-bench verify --kind %s: %s: %s\n", post_kind_name(o.kind), cuzk_errname(rc), err.msg);
    printf("verified: %s (%s, registered proof %llu, %zu sector proof%s, partition %u)\n", ok ? "yes" : "no",
           f.p->go_name, (unsigned long long)f.p->id, f.n, f.n == 1 ? "" : "s", o.partition);
    free(pub);
    free(ids);
    free(cr);
    g16_pvk_free(pvk);
    g16_vk_free(&vk);
    post_file_free(&f);
    return ok ? 0 : 1;
}

/* ---------------------------------------------------------- post-witness -- */

BENCH_CMD(post_witness, "post-witness",
          "post-witness --kind window-post|winning-post (--sector-size SIZE | --vanilla FILE) [--sectors N] "
          "[--threads T]: PoSt generation, parse, native check and witness time (wall and CPU)")
{
    struct post_opts o;
    opts_default(&o);
    if (post_flags(&o, argc, argv, 1, "post-witness")) goto usage;
    if (!o.vanilla == !o.size) goto usage;
    struct cuzk_error err = {0};
    struct pool *own = NULL, *pool = pool_default();
    if (o.threads == 1) pool = NULL;
    else if (o.threads > 1 && !(pool = own = pool_new(o.threads, &err))) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    unsigned nthr = pool ? pool_size(pool) : 1;
    struct post_file f;
    memset(&f, 0, sizeof f);
    int rc = CUZK_OK;
    if (o.vanilla) {
        if (load_post(&f, &o)) rc = CUZK_E_FORMAT;
    } else {
        const struct fil_post_proof *p = pick_proof(o.kind, o.reg, o.size, "post-witness");
        if (!p) {
            pool_free(own);
            return 2;
        }
        if (!o.sectors) o.sectors = o.kind == POST_WINNING ? 16 : p->sector_count;
        struct fil_post_gen g;
        uint64_t t0 = cuzk_now_ns();
        double c0 = cpu_s();
        rc = fil_post_generate(&g, p, o.randomness, o.miner, o.sectors, o.partition, o.seed, pool, &err);
        if (!rc) {
            printf("generate    %10.1f ms  cpu %.1f ms, %s, %zu sector proofs of %zu bytes (%u thread%s)\n",
                   ms_since(t0), (cpu_s() - c0) * 1e3, p->go_name, g.n, g.len, nthr, nthr > 1 ? "s" : "");
            f.p = p;
            f.cfg = g.cfg;
            f.n = g.n;
            f.blob = g.blob;
            f.len = calloc(g.n, sizeof *f.len);
            for (size_t i = 0; f.len && i < g.n; i++) f.len[i] = g.len;
            g.blob = NULL;
            g.n = 0;
            fil_post_gen_free(&g);
            if (!f.len) rc = cuzk_fail(&err, CUZK_E_NOMEM, "out of memory");
        }
    }
    struct fil_post_sector_proof *sp = f.n ? calloc(f.n, sizeof *sp) : NULL;
    if (!rc && !sp) rc = cuzk_fail(&err, CUZK_E_NOMEM, "out of memory");
    if (!rc) rc = parse_check(sp, &f, &o, pool, &err);
    struct post_layout l;
    if (!rc) rc = post_layout_get(&l, &f.cfg, &err);
    if (!rc) printf("layout      %u sectors x (%u aux, %u inputs): %u aux, %u inputs\n", f.cfg.sectors, l.sector_aux,
                    l.sector_inputs, l.n_aux, l.n_inputs);
    fr_t *in = NULL, *aux = NULL;
    uint32_t ni = 0, na = 0;
    uint64_t t0 = cuzk_now_ns();
    double c0 = cpu_s();
    if (!rc) rc = fil_post_witness_values(&in, &aux, &ni, &na, &f.cfg, sp, f.n, pool, &err);
    if (!rc) printf("witness     %10.1f ms  cpu %.1f ms, %u inputs, %u aux (%u thread%s, fresh buffers)\n",
                    ms_since(t0), (cpu_s() - c0) * 1e3, ni, na, nthr, nthr > 1 ? "s" : "");
    /* again into the same vectors: the cost without the kernel's first-touch zeroing of ~4 GB */
    if (!rc) {
        struct fil_post_partition part;
        rc = fil_post_partition_build(&part, &f.cfg, sp, f.n, &err);
        t0 = cuzk_now_ns();
        c0 = cpu_s();
        if (!rc) rc = post_witness_values(in, aux, &f.cfg, &part.w, pool, &err);
        if (!rc) printf("witness     %10.1f ms  cpu %.1f ms (buffers reused)\n", ms_since(t0), (cpu_s() - c0) * 1e3);
        fil_post_partition_free(&part);
    }
    if (rc) fprintf(stderr, "post-witness: %s: %s\n", cuzk_errname(rc), err.msg);
    cuzk_free(in);
    cuzk_free(aux);
    for (size_t i = 0; sp && i < f.n; i++) fil_post_sector_proof_free(&sp[i]);
    free(sp);
    post_file_free(&f);
    pool_free(own);
    return rc ? 1 : 0;
usage:
    fprintf(stderr, "usage: cuzk-bench post-witness --kind window-post|winning-post (--sector-size SIZE | --vanilla FILE)\n"
                    "         [--sectors N] [--registered-proof N] [--randomness HEX] [--threads T]\n"
                    "  T: 1 = calling thread only; default: the library pool (CUZK_THREADS)\n");
    return 2;
}
