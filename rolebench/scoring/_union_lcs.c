/* pip `rouge` 1.0.1's summary-level ROUGE-L recall, the `rolellm` protocol, for a batch of items.

   recalls(hypotheses, references) -> list[float]: hypotheses[i] is item i's hypothesis as its
   sentences (lists of words, as rolellm.sentences / zh_sentences make them), references[i] its
   references, each as its sentences. Item i's value is the max over its references of
   |union of pip's reconstructed LCS word sets over all (reference sentence, hypothesis sentence)
   pairs| / |distinct reference words|, 0.0 for a hypothesis without sentences or no reference with
   one: exactly rolellm_lcs.recall_item, whose docstrings define the algorithm this file ports
   (bit-parallel LCS rows over all hypothesis sentences packed in one bit row with guard bits, and
   pip's reconstruction walk, one step per row with a match). Words are compared as Python strings.

   The optional accelerator of rolebench/scoring/rolellm.py (its Python path computes the same
   floats where this module is not built). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t Word;

/* ---- word interning: a Python string -> a small integer id, per item ------------------------------ */

typedef struct {
    PyObject *word; /* borrowed: the caller's lists hold it */
    Py_hash_t hash;
    Py_ssize_t id;
} Entry;

typedef struct {
    Entry *entries;
    size_t mask;
    Py_ssize_t count;
} Interner;

static int interner_reset(Interner *t, Py_ssize_t expected) {
    size_t cap = 64;
    while (cap < (size_t)expected * 2 + 2) cap *= 2;
    if (cap > t->mask + 1 || !t->entries) {
        PyMem_Free(t->entries);
        t->entries = PyMem_Malloc(cap * sizeof(Entry));
        if (!t->entries) {
            PyErr_NoMemory();
            return -1;
        }
        t->mask = cap - 1;
    }
    memset(t->entries, 0, (t->mask + 1) * sizeof(Entry));
    t->count = 0;
    return 0;
}

/* The id of `word` (a str), a new one if unseen; -1 with an exception set. */
static Py_ssize_t intern_word(Interner *t, PyObject *word) {
    if (!PyUnicode_CheckExact(word)) { /* exact: hashing a subclass could run code that edits the lists */
        PyErr_Format(PyExc_TypeError, "a word is %.80s, not str", Py_TYPE(word)->tp_name);
        return -1;
    }
    Py_hash_t hash = PyObject_Hash(word);
    if (hash == -1) return -1;
    size_t j = (size_t)hash & t->mask;
    for (;;) {
        Entry *e = &t->entries[j];
        if (!e->word) break;
        if (e->hash == hash) {
            if (e->word == word) return e->id;
            int equal = PyUnicode_Compare(e->word, word) == 0;
            if (PyErr_Occurred()) return -1;
            if (equal) return e->id;
        }
        j = (j + 1) & t->mask;
    }
    t->entries[j].word = word;
    t->entries[j].hash = hash;
    t->entries[j].id = t->count;
    return t->count++;
}

/* ---- bit rows ---------------------------------------------------------------------------------- */

#if defined(_MSC_VER)
#include <intrin.h>
static inline int top_bit(Word x) { /* x != 0 */
    unsigned long i;
    _BitScanReverse64(&i, x);
    return (int)i;
}
#else
static inline int top_bit(Word x) { return 63 - __builtin_clzll(x); } /* x != 0 */
#endif

/* The highest set bit of row[lo:hi) (bit positions), or -1. */
static inline Py_ssize_t highest_bit(const Word *row, Py_ssize_t lo, Py_ssize_t hi) {
    if (hi <= lo) return -1;
    Py_ssize_t w = (hi - 1) >> 6, first = lo >> 6;
    Word x = row[w];
    int top = (int)((hi - 1) & 63);
    if (top < 63) x &= ((Word)2 << top) - 1;
    for (;;) {
        if (w == first) x &= ~(Word)0 << (lo & 63);
        if (x) return (w << 6) + top_bit(x);
        if (w == first) return -1;
        x = row[--w];
    }
}

static inline int any_bit(const Word *row, Py_ssize_t lo, Py_ssize_t hi) {
    return highest_bit(row, lo, hi) >= 0;
}

/* ---- one item ---------------------------------------------------------------------------------- */

typedef struct {
    Interner words;
    Py_ssize_t *ys;       /* ys[k]: the word id at hypothesis bit k; -1 for a guard bit */
    Py_ssize_t *seg_lo;   /* sentence s: bits [seg_lo[s], seg_hi[s]) */
    Py_ssize_t *seg_hi;
    Word *keep;           /* the sentences' bits, guards cleared */
    Py_ssize_t *mask_of;  /* word id -> row of `masks`, or -1: not in the hypothesis */
    Word *masks;          /* the bits of each hypothesis word */
    Word *v, *u, *fresh;
    Word *stops;          /* one row per reference word with a match */
    Py_ssize_t *row_word;
    Py_ssize_t *ref_ids;  /* the references' word ids, one after another */
    Py_ssize_t *union_mark, *new_mark;
    Py_ssize_t nw, stamp;
    size_t cap_ys, cap_seg_lo, cap_seg_hi, cap_keep, cap_mask_of, cap_masks, cap_v, cap_u, cap_fresh;
    size_t cap_stops, cap_row_word, cap_ref_ids, cap_union_mark, cap_new_mark;
} Work;

static int grow(void **buf, size_t *cap, size_t need, size_t size) {
    if (need <= *cap && *buf) return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    void *p = PyMem_Realloc(*buf, n * size);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    *buf = p;
    *cap = n;
    return 0;
}

static void work_free(Work *w) {
    PyMem_Free(w->words.entries);
    PyMem_Free(w->ys);
    PyMem_Free(w->seg_lo);
    PyMem_Free(w->seg_hi);
    PyMem_Free(w->keep);
    PyMem_Free(w->mask_of);
    PyMem_Free(w->masks);
    PyMem_Free(w->v);
    PyMem_Free(w->u);
    PyMem_Free(w->fresh);
    PyMem_Free(w->stops);
    PyMem_Free(w->row_word);
    PyMem_Free(w->ref_ids);
    PyMem_Free(w->union_mark);
    PyMem_Free(w->new_mark);
}

/* The stop rows of reference sentence x (word ids), top-down: rows with a match keep B | ~V, the row
   above a run of rows without a match ~V alone (rolellm_lcs._stop_rows). Returns the number of rows. */
static Py_ssize_t stop_rows(Work *w, const Py_ssize_t *x, Py_ssize_t len) {
    Py_ssize_t nw = w->nw, n = 0;
    int snap = 0;
    memcpy(w->v, w->keep, (size_t)nw * sizeof(Word));
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_ssize_t m = w->mask_of[x[i]];
        if (m >= 0) {
            const Word *mask = w->masks + m * nw;
            Word *v = w->v, *u = w->u;
            Word carry = 0, borrow = 0;
            for (Py_ssize_t k = 0; k < nw; k++) u[k] = v[k] & mask[k];
            for (Py_ssize_t k = 0; k < nw; k++) {
                Word a = v[k], b = u[k];
                Word sum = a + b + carry;
                carry = carry ? sum <= a : sum < a;
                Word diff = a - b - borrow;
                borrow = borrow ? a <= b : a < b;
                v[k] = (sum | diff) & w->keep[k];
            }
            Word *stop = w->stops + n * nw;
            for (Py_ssize_t k = 0; k < nw; k++) stop[k] = mask[k] | ~v[k];
            w->row_word[n++] = x[i];
            snap = 1;
        } else if (snap) {
            Word *stop = w->stops + (n - 1) * nw;
            for (Py_ssize_t k = 0; k < nw; k++) stop[k] = ~w->v[k];
            snap = 0;
        }
    }
    return n;
}

/* pip's llcs for one reference (rolellm_lcs._reference_union): `sents` its sentences, their word ids
   from w->ref_ids[first]. */
static Py_ssize_t reference_union(Work *w, PyObject *sents, Py_ssize_t first, Py_ssize_t n_segments,
                                  Py_ssize_t target) {
    Py_ssize_t nw = w->nw, in_union = 0;
    Py_ssize_t ustamp = ++w->stamp;
    Py_ssize_t n_sents = PyList_GET_SIZE(sents);
    const Py_ssize_t *next = w->ref_ids + first;
    for (Py_ssize_t s = 0; s < n_sents; s++) {
        Py_ssize_t len = PyList_GET_SIZE(PyList_GET_ITEM(sents, s));
        const Py_ssize_t *x = next; /* this sentence's word ids */
        next += len;
        Py_ssize_t nstamp = ++w->stamp, n_new = 0;
        memset(w->fresh, 0, (size_t)nw * sizeof(Word));
        for (Py_ssize_t i = 0; i < len; i++) {
            Py_ssize_t id = x[i];
            Py_ssize_t m = w->mask_of[id];
            if (m >= 0 && w->union_mark[id] != ustamp && w->new_mark[id] != nstamp) {
                w->new_mark[id] = nstamp;
                n_new++;
                const Word *mask = w->masks + m * nw;
                for (Py_ssize_t k = 0; k < nw; k++) w->fresh[k] |= mask[k];
            }
        }
        if (!n_new) continue;
        if (grow((void **)&w->stops, &w->cap_stops, (size_t)(len * nw), sizeof(Word)) < 0 ||
            grow((void **)&w->row_word, &w->cap_row_word, (size_t)len, sizeof(Py_ssize_t)) < 0)
            return -1;
        Py_ssize_t rows = stop_rows(w, x, len);
        for (Py_ssize_t g = 0; g < n_segments; g++) {
            Py_ssize_t lo = w->seg_lo[g], hi = w->seg_hi[g];
            if (!any_bit(w->fresh, lo, hi)) continue;
            for (Py_ssize_t r = rows - 1; r >= 0; r--) { /* from the last row up, as pip's walk */
                Py_ssize_t b = highest_bit(w->stops + r * nw, lo, hi);
                if (b < 0) break; /* left to column 0 */
                Py_ssize_t word = w->row_word[r];
                if (w->ys[b] == word) { /* a match: take it, go diagonally */
                    if (w->new_mark[word] == nstamp) {
                        w->union_mark[word] = ustamp;
                        w->new_mark[word] = 0;
                        in_union++;
                        const Word *mask = w->masks + w->mask_of[word] * nw;
                        for (Py_ssize_t k = 0; k < nw; k++) w->fresh[k] ^= mask[k];
                    }
                    hi = b;
                    if (!any_bit(w->fresh, lo, hi)) break;
                } else { /* an increment: up, same column */
                    hi = b + 1;
                }
            }
            if (in_union == target) return target;
        }
    }
    return in_union;
}

typedef struct {
    double bound;
    Py_ssize_t shared, m, index, first; /* first: where its word ids start in Work.ref_ids */
} Plan;

static int by_bound(const void *a, const void *b) {
    double x = ((const Plan *)a)->bound, y = ((const Plan *)b)->bound;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The number of words of `sents`, a list of sentences (lists); -1 with TypeError for anything else. */
static Py_ssize_t count_words(PyObject *sents) {
    if (!PyList_Check(sents)) goto wrong;
    Py_ssize_t n = 0;
    for (Py_ssize_t s = 0; s < PyList_GET_SIZE(sents); s++) {
        PyObject *sentence = PyList_GET_ITEM(sents, s);
        if (!PyList_Check(sentence)) goto wrong;
        n += PyList_GET_SIZE(sentence);
    }
    return n;
wrong:
    PyErr_SetString(PyExc_TypeError, "sentences must be lists of lists of str");
    return -1;
}

/* Item: hyp (its sentences), refs (a list of references, each its sentences) -> recall, or -1.0. */
static double recall_item(Work *w, PyObject *hyp, PyObject *refs, Plan **plans, size_t *cap_plans) {
    Py_ssize_t hyp_words = count_words(hyp);
    if (hyp_words < 0) return -1.0;
    if (!PyList_Check(refs)) {
        PyErr_SetString(PyExc_TypeError, "sentences must be lists of lists of str");
        return -1.0;
    }
    Py_ssize_t n_hyp = PyList_GET_SIZE(hyp), n_refs = PyList_GET_SIZE(refs);
    if (!n_hyp) return 0.0;
    Py_ssize_t nb = hyp_words + n_hyp, ref_words = 0; /* bits: the words and a guard per sentence */
    for (Py_ssize_t r = 0; r < n_refs; r++) {
        Py_ssize_t n = count_words(PyList_GET_ITEM(refs, r));
        if (n < 0) return -1.0;
        ref_words += n;
    }
    Py_ssize_t words_total = nb + ref_words; /* at least the number of distinct words */
    Py_ssize_t nw = (nb + 63) >> 6;
    w->nw = nw;
    if (interner_reset(&w->words, words_total) < 0 ||
        grow((void **)&w->ys, &w->cap_ys, (size_t)nb, sizeof(Py_ssize_t)) < 0 ||
        grow((void **)&w->seg_lo, &w->cap_seg_lo, (size_t)n_hyp, sizeof(Py_ssize_t)) < 0 ||
        grow((void **)&w->seg_hi, &w->cap_seg_hi, (size_t)n_hyp, sizeof(Py_ssize_t)) < 0 ||
        grow((void **)&w->keep, &w->cap_keep, (size_t)nw, sizeof(Word)) < 0 ||
        grow((void **)&w->v, &w->cap_v, (size_t)nw, sizeof(Word)) < 0 ||
        grow((void **)&w->u, &w->cap_u, (size_t)nw, sizeof(Word)) < 0 ||
        grow((void **)&w->fresh, &w->cap_fresh, (size_t)nw, sizeof(Word)) < 0 ||
        grow((void **)&w->ref_ids, &w->cap_ref_ids, (size_t)ref_words, sizeof(Py_ssize_t)) < 0 ||
        grow((void **)&w->mask_of, &w->cap_mask_of, (size_t)words_total, sizeof(Py_ssize_t)) < 0 ||
        grow((void **)&w->union_mark, &w->cap_union_mark, (size_t)words_total, sizeof(Py_ssize_t)) < 0 ||
        grow((void **)&w->new_mark, &w->cap_new_mark, (size_t)words_total, sizeof(Py_ssize_t)) < 0)
        return -1.0;
    memset(w->keep, 0, (size_t)nw * sizeof(Word));
    /* the hypothesis: word ids bit by bit, a guard after each sentence */
    Py_ssize_t k = 0;
    for (Py_ssize_t s = 0; s < n_hyp; s++) {
        PyObject *sentence = PyList_GET_ITEM(hyp, s);
        w->seg_lo[s] = k;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sentence); i++, k++) {
            Py_ssize_t id = intern_word(&w->words, PyList_GET_ITEM(sentence, i));
            if (id < 0) return -1.0;
            w->ys[k] = id;
            w->keep[k >> 6] |= (Word)1 << (k & 63);
        }
        w->seg_hi[s] = k;
        w->ys[k++] = -1;
    }
    Py_ssize_t n_hyp_ids = w->words.count;
    /* masks of the hypothesis words */
    if (grow((void **)&w->masks, &w->cap_masks, (size_t)(n_hyp_ids * nw), sizeof(Word)) < 0) return -1.0;
    memset(w->masks, 0, (size_t)(n_hyp_ids * nw) * sizeof(Word));
    for (Py_ssize_t id = 0; id < words_total; id++) w->mask_of[id] = id < n_hyp_ids ? id : -1;
    for (Py_ssize_t b = 0; b < nb; b++)
        if (w->ys[b] >= 0) w->masks[w->ys[b] * nw + (b >> 6)] |= (Word)1 << (b & 63);
    memset(w->union_mark, 0, (size_t)words_total * sizeof(Py_ssize_t));
    memset(w->new_mark, 0, (size_t)words_total * sizeof(Py_ssize_t));
    w->stamp = 0;
    /* each reference: its word ids (once), its distinct words m and shared words, the bound shared / m */
    if (grow((void **)plans, cap_plans, (size_t)n_refs + 1, sizeof(Plan)) < 0) return -1.0;
    Py_ssize_t n_plans = 0, at = 0;
    for (Py_ssize_t r = 0; r < n_refs; r++) {
        PyObject *sents = PyList_GET_ITEM(refs, r);
        Py_ssize_t stamp = ++w->stamp, m = 0, shared = 0, first = at;
        for (Py_ssize_t s = 0; s < PyList_GET_SIZE(sents); s++) {
            PyObject *sentence = PyList_GET_ITEM(sents, s);
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sentence); i++) {
                Py_ssize_t id = intern_word(&w->words, PyList_GET_ITEM(sentence, i));
                if (id < 0) return -1.0;
                w->ref_ids[at++] = id;
                if (w->new_mark[id] == stamp) continue;
                w->new_mark[id] = stamp;
                m++;
                shared += id < n_hyp_ids;
            }
        }
        if (shared) {
            Plan *p = &(*plans)[n_plans++];
            p->bound = (double)shared / (double)m;
            p->shared = shared;
            p->m = m;
            p->index = r;
            p->first = first;
        }
    }
    qsort(*plans, (size_t)n_plans, sizeof(Plan), by_bound);
    double best = 0.0;
    for (Py_ssize_t i = 0; i < n_plans; i++) {
        Plan *p = &(*plans)[i];
        if (p->bound <= best) break; /* recall <= bound <= best here and for every later reference */
        Py_ssize_t got = reference_union(w, PyList_GET_ITEM(refs, p->index), p->first, n_hyp, p->shared);
        if (got < 0) return -1.0;
        double recall = (double)got / (double)p->m;
        if (recall > best) best = recall;
    }
    return best;
}

static PyObject *recalls(PyObject *self, PyObject *args) {
    PyObject *hyps, *refs;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &hyps, &PyList_Type, &refs)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(hyps);
    if (PyList_GET_SIZE(refs) != n) {
        PyErr_SetString(PyExc_ValueError, "hypotheses and references differ in length");
        return NULL;
    }
    PyObject *result = PyList_New(n);
    if (!result) return NULL;
    Work w;
    memset(&w, 0, sizeof(w));
    Plan *plans = NULL;
    size_t cap_plans = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double value = recall_item(&w, PyList_GET_ITEM(hyps, i), PyList_GET_ITEM(refs, i), &plans, &cap_plans);
        PyObject *number = value < 0 ? NULL : PyFloat_FromDouble(value);
        if (!number) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, i, number);
    }
    work_free(&w);
    PyMem_Free(plans);
    return result;
}

static PyMethodDef methods[] = {
    {"recalls", recalls, METH_VARARGS,
     "recalls(hypotheses, references) -> list[float]: pip rouge's ROUGE-L recall, best reference "
     "(see the module source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_union_lcs", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__union_lcs(void) { return PyModule_Create(&module); }
