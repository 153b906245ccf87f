/* bench.h: cuzk-bench subcommand registry. Each cmd/cuzk-bench/ source file registers its
 * subcommands with BENCH_CMD, so adding one needs no edit elsewhere. */
#ifndef CUZK_BENCH_H
#define CUZK_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/groth16.h"

typedef int (*bench_cmd_fn)(int argc, char **argv);   /* argv[0] is the subcommand name */
void bench_register(const char *name, const char *help, bench_cmd_fn fn);

#define BENCH_CMD(ident, name, help)                                               \
    static int bench_##ident(int argc, char **argv);                               \
    __attribute__((constructor)) static void bench_reg_##ident(void)               \
    {                                                                              \
        bench_register(name, help, bench_##ident);                                 \
    }                                                                              \
    static int bench_##ident(int argc, char **argv)

/* Global options parsed by main before the subcommand: -a/--addr ADDR (daemon address). */
extern const char *bench_addr;
/* -a's daemon behind TLS / a token: --tls-ca, --tls-cert, --tls-key, --tls-server-name,
 * --token-file (NULL when not given); used by the client subcommands' connection. */
extern const char *bench_tls_ca, *bench_tls_cert, *bench_tls_key, *bench_tls_name,
    *bench_token_file;

/* Median of n doubles (sorts in place). */
double bench_median(double *v, size_t n);
/* The end of every `prove --kind`: optionally a*b=c on every row, the proof, its check against
 * pub (inputs recomputed from the request, not the witness), and the same proof against pub
 * with entry tamper changed, which must fail (the check's own sanity). Lines are labelled
 * "check<tag>", "prove<tag>", "verify<tag>"; out gets the proof's bytes. *ok: it verified. */
int bench_prove_verify(const char *tag, const struct g16_shape *s, const struct g16_pk *pk,
                       const struct g16_pvk *pvk, const struct g16_assignment *w, bool check,
                       g16_backend_fn be, void *bctx, fr_t *pub, size_t n_pub, size_t tamper,
                       uint8_t out[G16_PROOF_BYTES], bool *ok, struct cuzk_error *err);
/* 64 hex digits (optional "0x") into 32 bytes; false for anything else, NULL included. */
bool bench_parse_hex32(uint8_t out[32], const char *s);
/* A decimal / 0x-hex / octal u64 (strtoull base 0); false for anything else. */
bool bench_parse_u64(uint64_t *out, const char *s);

#endif
