/* test.h: the test registry and assertions (libuv style). Each test runs in its own
 * process with a timeout; assertions print both sides; the RNG seed is printed on failure
 * and replayed with CUZK_TEST_SEED. See docs/testing.md. */
#ifndef CUZK_TEST_H
#define CUZK_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/err.h"
#include "cuzk/util.h"

typedef void (*test_fn)(void);
void test_register(const char *name, test_fn fn, const char *file, unsigned timeout_s);
/* Per-test RNG, seeded from CUZK_TEST_SEED or a fresh seed (printed on failure). */
cuzk_rng *test_rng(void);
uint64_t test_seed(void);
/* Mark the running test skipped, with the reason, and end it. */
_Noreturn void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void test_fail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void test_hex(char *out, const void *p, size_t n);  /* out: 2n+1 chars, big-endian view */

#define TEST_T(name, timeout_s)                                                   \
    static void test_##name(void);                                                \
    __attribute__((constructor)) static void test_reg_##name(void)                \
    {                                                                             \
        test_register(#name, test_##name, __FILE__, timeout_s);                   \
    }                                                                             \
    static void test_##name(void)
#define TEST(name) TEST_T(name, 300)

#define ASSERT(c)                                                                 \
    do {                                                                          \
        if (!(c)) test_fail_at(__FILE__, __LINE__, "ASSERT(%s)", #c);             \
    } while (0)
#define ASSERT_MSG(c, ...)                                                        \
    do {                                                                          \
        if (!(c)) test_fail_at(__FILE__, __LINE__, __VA_ARGS__);                  \
    } while (0)
#define ASSERT_EQ_U64(a, b)                                                       \
    do {                                                                          \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                          \
        if (a_ != b_)                                                             \
            test_fail_at(__FILE__, __LINE__, "%s == %s: %" PRIu64 " != %" PRIu64, \
                         #a, #b, a_, b_);                                         \
    } while (0)
#define ASSERT_EQ_INT(a, b)                                                       \
    do {                                                                          \
        long long a_ = (long long)(a), b_ = (long long)(b);                       \
        if (a_ != b_)                                                             \
            test_fail_at(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_); \
    } while (0)
#define ASSERT_STR_CONTAINS(hay, needle)                                          \
    do {                                                                          \
        const char *h_ = (hay), *n_ = (needle);                                   \
        if (!h_ || !strstr(h_, n_))                                               \
            test_fail_at(__FILE__, __LINE__, "\"%s\" does not contain \"%s\"",    \
                         h_ ? h_ : "(null)", n_);                                 \
    } while (0)
#define ASSERT_STR_EQ(a, b)                                                       \
    do {                                                                          \
        const char *a_ = (a), *b_ = (b);                                          \
        if (!a_ || !b_ || strcmp(a_, b_))                                         \
            test_fail_at(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b, \
                         a_ ? a_ : "(null)", b_ ? b_ : "(null)");                 \
    } while (0)
/* Byte-wise equality, printed as hex on failure. */
#define ASSERT_MEM_EQ(a, b, n)                                                    \
    do {                                                                          \
        const void *a_ = (a), *b_ = (b);                                          \
        size_t n_ = (n);                                                          \
        if (memcmp(a_, b_, n_)) {                                                 \
            char *ha_ = malloc(2 * n_ + 1), *hb_ = malloc(2 * n_ + 1);            \
            test_hex(ha_, a_, n_);                                                \
            test_hex(hb_, b_, n_);                                                \
            test_fail_at(__FILE__, __LINE__, "%s == %s:\n  %s\n  %s", #a, #b, ha_, hb_); \
        }                                                                         \
    } while (0)
/* A call returning a cuzk_err code must return `code`; prints err.msg on mismatch. */
#define ASSERT_CODE(call, code, errp)                                             \
    do {                                                                          \
        int c_ = (call);                                                          \
        const struct cuzk_error *test_errp_ = (errp);                                     \
        if (c_ != (code))                                                         \
            test_fail_at(__FILE__, __LINE__, "%s returned %s, expected %s: %s", #call, \
                         cuzk_errname(c_), cuzk_errname(code), test_errp_ ? test_errp_->msg : ""); \
    } while (0)
#define ASSERT_OK(call, errp) ASSERT_CODE(call, CUZK_OK, errp)

#endif
