/* test_json_read.c: the C1 path's JSON reader (src/filecoin/json_read.h) against jansson as
 * the independent oracle. Random documents (nesting, escapes, raw and escaped Unicode with
 * surrogate pairs, int64 extremes, reals, random whitespace) must give the same tree; broken
 * documents (every prefix of small documents, random byte edits, hand-picked classes: bad
 * escapes, bad UTF-8, leading zeros, lone surrogates, trailing commas and garbage, nesting
 * past the limit) must be refused by both with the same text, line, column and
 * truncated-or-format class, or accepted by both with the same tree. */
#include <jansson.h>

#include "../../src/filecoin/json_read.h"
#include "test.h"

/* ---- comparing a jr tree with a jansson tree ---- */

static bool same_tree(struct jr_doc *d, size_t i, const json_t *j);

static bool same_object(struct jr_doc *d, size_t i, const json_t *j)
{
    /* jansson keeps one value per key, the last written: each distinct key's last member must
     * match it, and the distinct keys are those whose lookup lands on their own member */
    size_t k = i + 1, distinct = 0;
    for (size_t m = 0; m < jr_len(d, i); m++) {
        size_t klen;
        const char *key = jr_str(d, k, &klen);
        char buf[256];
        if (klen >= sizeof buf) return false;
        memcpy(buf, key, klen);
        buf[klen] = 0;
        const json_t *v = json_object_getn(j, key, klen);
        if (!v) return false;
        if (jr_get(d, i, buf) == k + 1) {
            distinct++;
            if (!same_tree(d, k + 1, v)) return false;
        }
        k = jr_end(d, k + 1);
    }
    return k == jr_end(d, i) && distinct == json_object_size(j);
}

static bool same_tree(struct jr_doc *d, size_t i, const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return jr_type(d, i) == JR_OBJECT && same_object(d, i, j);
    case JSON_ARRAY: {
        if (jr_type(d, i) != JR_ARRAY || jr_len(d, i) != json_array_size(j)) return false;
        /* jr_at walked in order first (its cursor makes that O(1) a step), then the subtrees */
        size_t k = i + 1;
        for (size_t e = 0; e < json_array_size(j); e++, k = jr_end(d, k))
            if (jr_at(d, i, e) != k) return false;
        if (k != jr_end(d, i) || jr_at(d, i, json_array_size(j)) != JR_NONE) return false;
        k = i + 1;
        for (size_t e = 0; e < json_array_size(j); e++, k = jr_end(d, k))
            if (!same_tree(d, k, json_array_get(j, e))) return false;
        return true;
    }
    case JSON_STRING: {
        if (jr_type(d, i) != JR_STRING) return false;
        size_t n;
        const char *s = jr_str(d, i, &n);
        return n == json_string_length(j) && !memcmp(s, json_string_value(j), n);
    }
    case JSON_INTEGER: return jr_type(d, i) == JR_INT && jr_int(d, i) == json_integer_value(j);
    case JSON_REAL: return jr_type(d, i) == JR_REAL;
    case JSON_TRUE: return jr_type(d, i) == JR_TRUE;
    case JSON_FALSE: return jr_type(d, i) == JR_FALSE;
    default: return jr_type(d, i) == JR_NULL;
    }
}

/* Parse with both; they must agree (tree, or error text/line/column/class). Returns
 * whether the document was accepted. */
static bool check_doc(const char *s, size_t n)
{
    json_error_t je;
    json_t *j = json_loadb(s, n, 0, &je);
    struct jr_doc d;
    struct jr_error e;
    int rc = jr_parse(&d, s, n, &e);
    char shown[120];
    snprintf(shown, sizeof shown, "%.*s", (int)(n < 100 ? n : 100), s);
    if (j) {
        ASSERT_MSG(rc == CUZK_OK, "jansson accepts, jr refuses (%s at %d:%d) <%s>", e.text, e.line, e.column, shown);
        ASSERT_MSG(same_tree(&d, 0, j), "trees differ for <%s>", shown);
        ASSERT_EQ_INT(d.count, jr_end(&d, 0));
        jr_free(&d);
        json_decref(j);
        return true;
    }
    ASSERT_MSG(rc != CUZK_OK, "jansson refuses (%s), jr accepts <%s>", je.text, shown);
    int want = json_error_code(&je) == json_error_premature_end_of_input ? CUZK_E_TRUNCATED : CUZK_E_FORMAT;
    ASSERT_MSG(rc == want && !strcmp(e.text, je.text) && e.line == je.line && e.column == je.column,
               "<%s>: jansson %s \"%s\" at %d:%d, jr %s \"%s\" at %d:%d", shown,
               want == CUZK_E_TRUNCATED ? "TRUNCATED" : "FORMAT", je.text, je.line, je.column,
               rc == CUZK_E_TRUNCATED ? "TRUNCATED" : rc == CUZK_E_FORMAT ? "FORMAT" : "other", e.text,
               e.line, e.column);
    return false;
}

/* ---- a random document writer ---- */

struct buf {
    char *p;
    size_t n, cap;
};
static void put(struct buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        ASSERT(b->p);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}
static void puts_(struct buf *b, const char *s) { put(b, s, strlen(s)); }
static unsigned rnd(unsigned m) { return (unsigned)(cuzk_rng_u64(test_rng()) % m); }

static void ws(struct buf *b)
{
    static const char *w[] = {"", "", "", " ", "\n", "\t", "\r\n  "};
    puts_(b, w[rnd(7)]);
}

static void gen_string(struct buf *b)
{
    static const char *parts[] = {"a", "Z", "key", " ", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r",
                                  "\\t", "\\u0041", "\\u00e9", "\\u20AC", "\\uD83D\\uDE00", "\xc3\xa9",
                                  "\xe2\x82\xac", "\xf0\x9f\x98\x80", "{", "[", ",", ":", "\\u001f"};
    puts_(b, "\"");
    for (unsigned k = rnd(6); k; k--) puts_(b, parts[rnd(sizeof parts / sizeof *parts)]);
    puts_(b, "\"");
}

static void gen_value(struct buf *b, int depth)
{
    char t[64];
    unsigned kind = depth > 5 ? rnd(7) : rnd(9);
    switch (kind) {
    case 0: {
        static const char *ints[] = {"0", "-0", "9223372036854775807", "-9223372036854775808", "255", "-1"};
        if (rnd(2)) puts_(b, ints[rnd(6)]);
        else snprintf(t, sizeof t, "%lld", (long long)cuzk_rng_u64(test_rng()) >> rnd(63)), puts_(b, t);
        break;
    }
    case 1: {
        static const char *reals[] = {"0.5", "-1.25e3", "1E-5", "2e+10", "1.7976931348623157e308", "1e-400"};
        puts_(b, reals[rnd(6)]);
        break;
    }
    case 2: gen_string(b); break;
    case 3: puts_(b, "true"); break;
    case 4: puts_(b, "false"); break;
    case 5: puts_(b, "null"); break;
    case 6: snprintf(t, sizeof t, "%u", rnd(256)), puts_(b, t); break;
    case 7: {
        puts_(b, "[");
        ws(b);
        for (unsigned k = rnd(5), i = 0; i < k; i++) {
            if (i) puts_(b, ","), ws(b);
            gen_value(b, depth + 1);
            ws(b);
        }
        puts_(b, "]");
        break;
    }
    default: {
        puts_(b, "{");
        ws(b);
        for (unsigned k = rnd(5), i = 0; i < k; i++) {
            if (i) puts_(b, ","), ws(b);
            snprintf(t, sizeof t, "\"k%u\\u00e9%s\"", i, rnd(2) ? "\\n" : "");
            puts_(b, t);
            ws(b);
            puts_(b, ":");
            ws(b);
            gen_value(b, depth + 1);
            ws(b);
        }
        puts_(b, "}");
    }
    }
}

static char *gen_doc(size_t *n)
{
    struct buf b = {0};
    ws(&b);
    bool obj = rnd(2);
    puts_(&b, obj ? "{\"r\":[" : "[");
    for (unsigned k = 1 + rnd(6), i = 0; i < k; i++) {
        if (i) puts_(&b, ",");
        gen_value(&b, 1);
    }
    puts_(&b, obj ? "]}" : "]");
    ws(&b);
    *n = b.n;
    return b.p;
}

TEST(random_documents_match_jansson)
{
    for (int r = 0; r < 20000; r++) {
        size_t n;
        char *s = gen_doc(&n);
        ASSERT_MSG(check_doc(s, n), "generated document refused: %s", s);
        free(s);
    }
}

/* Every prefix of a few documents, and random one-byte edits of generated ones. */
TEST(truncations_and_edits_match_jansson)
{
    static const char *docs[] = {
        "{\"a\": [1, -2, 3.5e1, true, false, null], \"b\\u00e9\": {\"c\": \"x\\\"y\\uD83D\\uDE00\xc3\xa9\"}}",
        "[\n  {\"SectorNum\": 42,\n   \"Phase1Out\": \"ZXlK\"},\n  [0, 255, -9223372036854775808]\n]\n",
    };
    for (size_t d = 0; d < 2; d++)
        for (size_t n = 0; n <= strlen(docs[d]); n++) check_doc(docs[d], n);
    static const char edits[] = "\"\\{}[],:0-1.eE+uU \n\x01\x80\xc3\xff\xed\xf4" "aZ";
    for (int r = 0; r < 20000; r++) {
        size_t n;
        char *s = gen_doc(&n);
        size_t at = rnd((unsigned)n);
        switch (rnd(3)) {
        case 0: s[at] = edits[rnd(sizeof edits - 1)]; break;
        case 1: memmove(s + at, s + at + 1, n - at), n--; break;
        default:
            s = realloc(s, n + 2);
            memmove(s + at + 1, s + at, n - at + 1);
            s[at] = edits[rnd(sizeof edits - 1)];
            n++;
        }
        check_doc(s, n);
        free(s);
    }
}

TEST(malformed_classes_match_jansson)
{
    static const char *bad[] = {
        "", "  ", "1", "\"s\"", "[", "{", "[1,]", "[1,", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":}", "{1:2}",
        "[01]", "[-01]", "[-]", "[1.]", "[1.e5]", "[1e]", "[1e+]", "[.5]", "[+1]", "[0x10]", "[tru]",
        "[truex]", "[nul]", "[True]", "[1 2]", "[1] x", "{} {}", "[]]", "[\"\\x\"]", "[\"\\u12G4\"]",
        "[\"\\u12\"]", "[\"\\", "[\"\\u", "[\"abc", "[\"a\nb\"]", "[\"a\tb\"]", "[\"\\uD800\"]",
        "[\"\\uDC00\"]", "[\"\\uD800\\u0041\"]", "[\"\\uD800x\"]", "[\"\\uD800\\x\"]", "[\"\\u0000\"]",
        "{\"\\u0000\":1}", "[\"\xff\"]", "[\"\xc3\"]", "[\"\xc0\x80\"]", "[\"\xed\xa0\x80\"]",
        "[\"\xf4\x90\x80\x80\"]", "[\"\xe2\x82\"]", "[1\xff]", "[tr\xff]", "[\xc3\xa9]", "[\xff]",
        "[\"\\\xff\"]", "[\"\\u1\xff\"]", "[1.\xff]", "[1e\xff]", "[-\xff]", "[\"\\u1\xc3\xa9\"]",
        "[99999999999999999999]", "[9223372036854775808]", "[-9223372036854775809]", "[1e999]",
        "[-1e999]", "[1e-999]", "[\"aaaaaaaaaaaaaaaaaaaaaaaaa", "[\"aaaaaaaaaaaaaaaaaaaaaa\\q\"]",
        "\xef\xbb\xbf[]", "[1,\n\n  #]", "{\"a\":1 \"b\":2}", "[1 \"ab\\x\"]",
        "[1 \"abc", "[\"\\uD83D\\uDE00\"] x", "[\"\\/\\b\\f\\n\\r\\t\"]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t n = strlen(bad[i]);
        check_doc(bad[i], n);
    }
    /* a raw NUL byte where a token should be (jansson: "near end of file", premature) */
    check_doc("[1]\0", 4);
    check_doc("[\0]", 3);
    check_doc("[\"a\0\"]", 5);
    /* nesting: the limit (jansson's 2048 values deep) and one past it, as arrays and objects */
    for (int extra = 0; extra < 2; extra++) {
        for (int obj = 0; obj < 2; obj++) {
            struct buf b = {0};
            int deep = 2047 + extra;
            for (int i = 0; i < deep; i++) puts_(&b, obj ? "{\"k\":" : "[");
            puts_(&b, "1");
            for (int i = 0; i < deep; i++) puts_(&b, obj ? "}" : "]");
            ASSERT_EQ_INT(check_doc(b.p, b.n), !extra);
            free(b.p);
        }
    }
}

/* Documents denser than a C1 (a node per 2 or 3 bytes) grow the node array past its first
 * allocation; the trees still match jansson's, and the same with a fault near the end. */
TEST(dense_documents_grow_the_node_array)
{
    static const char *unit[] = {"0,", "[],", "{},", "[0,{\"a\":[]}],"};
    for (size_t u = 0; u < 4; u++) {
        struct buf b = {0};
        puts_(&b, "[");
        for (int i = 0; i < 60000; i++) puts_(&b, unit[u]);
        b.p[b.n - 1] = ']';
        ASSERT(check_doc(b.p, b.n));
        b.p[b.n - 3] = 'x';
        ASSERT(!check_doc(b.p, b.n));
        free(b.p);
    }
}

/* Duplicate keys: jansson keeps the last value; jr_get finds the last, jr_only_key sees one
 * distinct key, jr_first_key the first written. */
TEST(duplicate_keys_and_navigation)
{
    const char *s = "{\"Top\":{\"x\":1},\"Top\":{\"x\":2}}";
    struct jr_doc d;
    struct jr_error e;
    ASSERT_EQ_INT(jr_parse(&d, s, strlen(s), &e), CUZK_OK);
    json_t *j = json_loads(s, 0, NULL);
    ASSERT(j);
    size_t v = jr_get(&d, 0, "Top");
    ASSERT(v != JR_NONE);
    ASSERT_EQ_INT(jr_int(&d, jr_get(&d, v, "x")), json_integer_value(json_object_get(json_object_get(j, "Top"), "x")));
    ASSERT_EQ_INT(json_object_size(j), 1);
    ASSERT(jr_only_key(&d, 0, "Top"));
    ASSERT(!jr_only_key(&d, v, "y"));
    ASSERT(jr_get(&d, 0, "Tops") == JR_NONE);
    size_t kl;
    const char *k = jr_first_key(&d, 0, &kl);
    ASSERT_EQ_INT(kl, 3);
    ASSERT(!memcmp(k, "Top", 3));
    json_decref(j);
    jr_free(&d);
}

/* Everything the reader holds comes from cuzk_malloc/cuzk_realloc (the thread's meter sees
 * it, and jr_free gives it all back), and a meter too small for the node array fails the
 * parse with CUZK_E_NOMEM, not a format error. */
TEST(allocations_are_metered)
{
    struct buf b = {0};
    puts_(&b, "[");
    for (int i = 0; i < 20000; i++) puts_(&b, i ? ",\"\\u00e9\",7" : "\"\\u00e9\",7");
    puts_(&b, "]");
    struct cuzk_meter m;
    struct jr_doc d;
    struct jr_error e;
    cuzk_meter_begin(&m, (uint64_t)1 << 30, 0);
    int rc = jr_parse(&d, b.p, b.n, &e);
    uint64_t held = m.used;
    jr_free(&d);
    uint64_t after = m.used;
    cuzk_meter_end();
    ASSERT_EQ_INT(rc, CUZK_OK);
    /* 40001 nodes of 16 bytes at least, plus 20000 decoded 2-byte strings */
    ASSERT_MSG(held >= 40001 * 16 + 20000 * 2, "held %llu", (unsigned long long)held);
    ASSERT_EQ_INT(after, 0);
    cuzk_meter_begin(&m, held / 2, 0);
    rc = jr_parse(&d, b.p, b.n, &e);
    bool over = m.over;
    cuzk_meter_end();
    ASSERT_EQ_INT(rc, CUZK_E_NOMEM);
    ASSERT(over);
    free(b.p);
}
