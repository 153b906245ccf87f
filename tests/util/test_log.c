/* test_log.c: clog_id, the quoting of client-chosen ids in text log lines. The oracle is a
 * decoder written here from the documented format (quotes, \" \\ \xHH): every id decodes back
 * to itself, and the quoted form has no character that ends a field (space outside the quotes,
 * a comma, an unescaped quote, a control character). */
#include <stdlib.h>
#include <string.h>

#include "cuzk/log.h"
#include "test.h"

/* Undo clog_id; false if s is not in its format. */
static bool decode(const char *s, char *out, size_t cap)
{
    size_t n = strlen(s), o = 0;
    if (n < 2 || s[0] != '"' || s[n - 1] != '"') return false;
    for (size_t i = 1; i + 1 < n; i++) {
        if (o + 1 >= cap) return false;
        if (s[i] == '"' || s[i] == ',' || (unsigned char)s[i] < 0x20 || s[i] == 0x7f) return false;
        if (s[i] != '\\') { out[o++] = s[i]; continue; }
        if (i + 1 >= n - 1) return false;
        char c = s[++i];
        if (c == '"' || c == '\\') { out[o++] = c; continue; }
        if (c != 'x' || i + 2 >= n - 1) return false;
        char hex[3] = {s[i + 1], s[i + 2], 0};
        char *end;
        long v = strtol(hex, &end, 16);
        if (*end || v < 1 || v > 255) return false;
        out[o++] = (char)v;
        i += 2;
    }
    out[o] = 0;
    return true;
}

TEST(clog_id_quotes_and_round_trips)
{
    const char *ids[] = {"", "porep-1000-42", "a kind=porep status=FAILED", "x,y,z", "say \"hi\"",
                         "back\\slash", "tab\tnew\nline\x7f", "ünïcødé", "\\x2c"};
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
        char q[CLOG_ID_MAX], back[256];
        clog_id(q, sizeof q, ids[k]);
        ASSERT_MSG(decode(q, back, sizeof back), "id %zu: %s is not in the format", k, q);
        ASSERT_MSG(!strcmp(back, ids[k]), "id %zu: %s decodes to %s", k, q, back);
        ASSERT_MSG(!strchr(q, ','), "id %zu: %s has a comma (a TIMELINE column)", k, q);
    }
    char q[CLOG_ID_MAX];
    ASSERT_STR_EQ(clog_id(q, sizeof q, "a kind=porep status=FAILED"), "\"a kind=porep status=FAILED\"");
    ASSERT_STR_EQ(clog_id(q, sizeof q, "x,y"), "\"x\\x2cy\"");
    ASSERT_STR_EQ(CLOG_ID("say \"hi\""), "\"say \\\"hi\\\"\"");
}

/* Random ids of the longest accepted length (127 bytes, any byte but NUL) always fit
 * CLOG_ID_MAX and round-trip; a short buffer cuts the id but keeps both quotes and never
 * splits an escape. */
TEST(clog_id_bounds)
{
    uint64_t seed = test_seed();
    for (int t = 0; t < 2000; t++) {
        char id[128], q[CLOG_ID_MAX], back[256];
        for (int i = 0; i < 127; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            id[i] = (char)(1 + (seed >> 33) % 255);
        }
        id[127] = 0;
        clog_id(q, sizeof q, id);
        ASSERT(strlen(q) < sizeof q);
        ASSERT(decode(q, back, sizeof back));
        ASSERT(!strcmp(back, id));
        for (size_t cap = 3; cap < 40; cap++) {
            char s[40];
            clog_id(s, cap, id);
            ASSERT(strlen(s) < cap);
            ASSERT_MSG(decode(s, back, sizeof back), "cap %zu: %s", cap, s);
            ASSERT(!strncmp(back, id, strlen(back)));
        }
    }
    char tiny[2] = "x";
    clog_id(tiny, sizeof tiny, "abc");
    ASSERT_STR_EQ(tiny, "");
}
