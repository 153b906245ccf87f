/* shape_internal.h: the constraint-system builder's state, shared by shape.c (recording one
 * constraint at a time) and shape_seg.c (recording repeated segments in parallel and merging
 * them). Not installed: nothing outside src/groth16 sees the layout. */
#ifndef CUZK_SHAPE_INTERNAL_H
#define CUZK_SHAPE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "cuzk/groth16.h"

#define G16_MAX_COEFFS 65536u

struct g16_mat_build {
    uint64_t *row_ptr;      /* rows + 1 */
    uint32_t *col;          /* tagged variable handles until finish, then columns */
    uint16_t *cidx;
    uint64_t nnz, nnz_cap, row_cap;
};

struct g16_builder {
    bool count_only;
    uint32_t n_inputs, n_aux;        /* next handles (global ones in a segment builder) */
    uint64_t n_rows;                 /* rows recorded (local to the segment in a segment builder) */
    struct g16_mat_build m[3];
    fr_t *coeffs;
    uint32_t n_coeffs;
    uint32_t *slots;                 /* coefficient hash: index + 1, 0 = empty */
    uint64_t *a_aux, *b_inp, *b_aux; /* density bitmaps, grown with the variable counts */
    size_t inp_words, aux_words;     /* capacity in words */
    struct g16_term *scratch;
    size_t scratch_cap;
    struct cuzk_error err;           /* sticky: the first failure, reported by finish */

    /* A segment builder (g16_builder_segments) records one segment of a main builder: its
     * rows stay local (row_ptr from 0, coefficient indices into its own table), its
     * variables are the main builder's global handles, and its density bitmaps are the main
     * builder's (already grown to the final counts), set with atomic ORs because segments
     * recorded at the same time share the words at their boundaries and the prefix's. */
    bool segment;
    size_t seg_index;
    uint32_t pre_inputs, pre_aux;    /* the prefix: handles below these are shared */
    uint32_t seg_in0, seg_aux0;      /* this segment's first handles */
    uint32_t seg_inputs, seg_aux;    /* how many it must allocate */
};

/* A builder without ONE and with empty matrices (g16_builder_new allocates ONE after). */
struct g16_builder *g16__builder_alloc(bool count_only);
/* Grow a zero-filled bitmap so that it holds bit idx. */
bool g16__bitmap_reserve(uint64_t **bm, size_t *cap_words, uint64_t idx);
/* Index of c in b's coefficient table, inserting it; -1 when the table is full. */
long g16__coeff_index(struct g16_builder *b, const fr_t *c);
/* Empty b's coefficient table (a segment builder reused for the next segment). */
void g16__coeffs_clear(struct g16_builder *b);
/* Capacity for rows rows and nnz nonzeros: exactly that with `exact`, else at least double
 * the old capacity (amortized appends). */
bool g16__mat_reserve(struct g16_mat_build *m, uint64_t rows, uint64_t nnz, bool exact);
/* Record the first failure: "g16 builder: [segment S: ]what". Returns the sticky code. */
int g16__bfail(struct g16_builder *b, int code, const char *what);

#endif
