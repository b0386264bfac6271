/* Tokenizer cjk-char-v1 with exact token interning, for the `rolebench` ROUGE-L scorer.

   token_strings(texts, cjk_ranges) -> list[str]: for each text, a string with one character per
   token of `tokenize_cjk_char(text)` (rolebench/scoring/tokenize.py, the definition); equal tokens
   get equal characters and distinct tokens distinct ones, across the whole call. Characters are
   numbered in order of first appearance (so frequent tokens get small ones), skipping the surrogate
   range. Raises OverflowError when the call holds more distinct tokens than there are code points.

   cjk_ranges: the (lo, hi) code point ranges of CJK_RANGES, each character a token of its own.
   Tokens: runs of ASCII letters (lowercased) and digits, plus each CJK character. Outside ASCII, only
   two characters lowercase to something holding a token character: U+0130 -> "i" + U+0307 (a token
   character then a break) and U+212A KELVIN SIGN -> "k"; every other character is a break
   (tests/test_scoring.py checks every code point against the Python definition).

   The optional accelerator of rolebench/scoring/f_measure.py (`token_strings`), whose numpy path
   computes the same thing where this module is not built (hatch_build.py compiles it at install). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_RANGES 64
#define N_CODES (0x110000 - 0x800)

typedef struct {
    Py_UCS4 lo[MAX_RANGES], hi[MAX_RANGES];
    int n;
    Py_UCS4 min;
} Ranges;

static inline int is_cjk(const Ranges *r, Py_UCS4 c) {
    if (c < r->min) return 0;
    for (int i = 0; i < r->n; i++)
        if (c >= r->lo[i] && c <= r->hi[i]) return 1;
    return 0;
}

/* A token's exact key, as in tokenize.py's TokenKeys: up to 16 letters/digits, its bytes little-endian
   (k1 the first 8, k2 the next 8, zero-padded: token bytes are never 0, so k2 <= 0x7A7A...7A); a
   longer token, (its number among the long tokens, LONG); a CJK character, (its code point, CJK). */
#define LONG 0xFFFFFFFFFFFFFFFFULL
#define CJK 0xFFFFFFFFFFFFFFFEULL

typedef struct {
    uint64_t k1, k2; /* (0, 0), the key of no token: an empty slot */
} Slot;

typedef struct {
    Slot *slots;
    uint32_t *numbers; /* numbers[j]: the number of the key in slots[j] */
    size_t mask, count;
} Table;

static inline size_t slot_of(uint64_t k1, uint64_t k2, size_t mask) {
    uint64_t h = k1 * 0x9E3779B97F4A7C15ULL ^ k2 * 0xC2B2AE3D27D4EB4FULL;
    return (size_t)(h >> 32 ^ h) & mask;
}

static int table_init(Table *t, size_t cap) {
    t->slots = PyMem_Calloc(cap, sizeof(Slot));
    t->numbers = PyMem_Malloc(cap * sizeof(uint32_t));
    t->mask = cap - 1;
    t->count = 0;
    if (!t->slots || !t->numbers) {
        PyMem_Free(t->slots);
        PyMem_Free(t->numbers);
        t->slots = NULL;
        t->numbers = NULL;
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void table_free(Table *t) {
    PyMem_Free(t->slots);
    PyMem_Free(t->numbers);
}

static int table_grow(Table *t) {
    Table bigger;
    if (table_init(&bigger, (t->mask + 1) * 2) < 0) return -1;
    for (size_t i = 0; i <= t->mask; i++) {
        Slot *s = &t->slots[i];
        if (!s->k1 && !s->k2) continue;
        size_t j = slot_of(s->k1, s->k2, bigger.mask);
        while (bigger.slots[j].k1 || bigger.slots[j].k2) j = (j + 1) & bigger.mask;
        bigger.slots[j] = *s;
        bigger.numbers[j] = t->numbers[i];
    }
    bigger.count = t->count;
    table_free(t);
    *t = bigger;
    return 0;
}

/* The number of key (k1, k2) != (0, 0): its own, or the next (t->count) for a new key; -1 with an
   exception set. */
static inline int64_t table_number(Table *t, uint64_t k1, uint64_t k2) {
    size_t j = slot_of(k1, k2, t->mask);
    for (;;) {
        Slot *s = &t->slots[j];
        if (s->k1 == k1 && s->k2 == k2) return t->numbers[j];
        if (!s->k1 && !s->k2) break;
        j = (j + 1) & t->mask;
    }
    t->slots[j].k1 = k1;
    t->slots[j].k2 = k2;
    t->numbers[j] = (uint32_t)t->count;
    int64_t number = (int64_t)t->count++;
    if (t->count * 2 > t->mask && table_grow(t) < 0) return -1;
    return number;
}

typedef struct {
    Table tokens; /* key -> code */
    PyObject *long_tokens; /* dict: bytes of a token over 16 characters -> its number */
    Py_UCS4 *out; /* the current text's codes */
    Py_ssize_t out_len, out_cap;
    unsigned char *run; /* a long run's bytes */
    Py_ssize_t run_cap;
} State;

/* Append the code of key (k1, k2) to the current text's codes. */
static inline int emit(State *st, uint64_t k1, uint64_t k2) {
    int64_t number = table_number(&st->tokens, k1, k2);
    if (number < 0) return -1;
    if (number >= N_CODES) {
        PyErr_SetString(PyExc_OverflowError, "more distinct tokens than code points");
        return -1;
    }
    if (st->out_len == st->out_cap) {
        Py_ssize_t cap = st->out_cap ? st->out_cap * 2 : 4096;
        Py_UCS4 *out = PyMem_Realloc(st->out, (size_t)cap * sizeof(Py_UCS4));
        if (!out) {
            PyErr_NoMemory();
            return -1;
        }
        st->out = out;
        st->out_cap = cap;
    }
    st->out[st->out_len++] = (Py_UCS4)(number < 0xD800 ? number : number + 0x800);
    return 0;
}

/* The key of a run of len > 16 token bytes: (its number in st->long_tokens, LONG). */
static int emit_long(State *st, const unsigned char *bytes, Py_ssize_t len) {
    PyObject *key = PyBytes_FromStringAndSize((const char *)bytes, len);
    if (!key) return -1;
    PyObject *number = PyDict_GetItemWithError(st->long_tokens, key);
    Py_ssize_t n;
    if (number) {
        n = PyLong_AsSsize_t(number);
    } else if (PyErr_Occurred()) {
        Py_DECREF(key);
        return -1;
    } else {
        n = PyDict_GET_SIZE(st->long_tokens);
        PyObject *value = PyLong_FromSsize_t(n);
        if (!value || PyDict_SetItem(st->long_tokens, key, value) < 0) {
            Py_XDECREF(value);
            Py_DECREF(key);
            return -1;
        }
        Py_DECREF(value);
    }
    Py_DECREF(key);
    return emit(st, (uint64_t)n, LONG);
}

/* 'a'-'z' and '0'-'9' for themselves, 'A'-'Z' lowercased; 0 for every other ASCII character. */
static unsigned char TOKEN_BYTE[128];

static inline unsigned char token_byte(Py_UCS4 c) {
    return c < 128 ? TOKEN_BYTE[c] : c == 0x212A ? 'k' : c == 0x130 ? 'i' : 0;
}

/* The run text[start:end] of token characters (U+0130 only last): its key, emitted. */
static int end_run(State *st, int kind, const void *data, Py_ssize_t start, Py_ssize_t end) {
    Py_ssize_t len = end - start;
    if (len <= 16) {
        uint64_t k[2] = {0, 0};
        for (Py_ssize_t i = 0; i < len; i++)
            k[i >> 3] |= (uint64_t)token_byte(PyUnicode_READ(kind, data, start + i)) << (8 * (i & 7));
        return emit(st, k[0], k[1]);
    }
    if (len > st->run_cap) {
        unsigned char *run = PyMem_Realloc(st->run, (size_t)len);
        if (!run) {
            PyErr_NoMemory();
            return -1;
        }
        st->run = run;
        st->run_cap = len;
    }
    for (Py_ssize_t i = 0; i < len; i++) st->run[i] = token_byte(PyUnicode_READ(kind, data, start + i));
    return emit_long(st, st->run, len);
}

static PyObject *codes_of(State *st, const Ranges *r, PyObject *text) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t start = -1; /* the current run's first character, -1 outside a run */
    st->out_len = 0;
    if (kind == PyUnicode_1BYTE_KIND) { /* ASCII and Latin-1: no CJK, no U+0130 or U+212A */
        const unsigned char *s = data;
        uint64_t k[2] = {0, 0}; /* the current run's key so far (its first 16 bytes) */
        for (Py_ssize_t i = 0; i < n; i++) {
            unsigned char b = s[i] < 128 ? TOKEN_BYTE[s[i]] : 0;
            if (b) {
                if (start < 0) start = i;
                Py_ssize_t at = i - start;
                if (at < 16) k[at >> 3] |= (uint64_t)b << (8 * (at & 7));
            } else if (start >= 0) {
                if ((i - start <= 16 ? emit(st, k[0], k[1]) : end_run(st, kind, data, start, i)) < 0)
                    return NULL;
                start = -1;
                k[0] = k[1] = 0;
            }
        }
        if (start >= 0 && (n - start <= 16 ? emit(st, k[0], k[1]) : end_run(st, kind, data, start, n)) < 0)
            return NULL;
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, st->out, st->out_len);
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (token_byte(c)) {
                if (start < 0) start = i;
                if (c == 0x130) { /* "i" + U+0307: the run ends after its "i" */
                    if (end_run(st, kind, data, start, i + 1) < 0) return NULL;
                    start = -1;
                }
                continue;
            }
            if (start >= 0) {
                if (end_run(st, kind, data, start, i) < 0) return NULL;
                start = -1;
            }
            if (c >= r->min && is_cjk(r, c) && emit(st, c, CJK) < 0) return NULL;
        }
    }
    if (start >= 0 && end_run(st, kind, data, start, n) < 0) return NULL;
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, st->out, st->out_len);
}

static int parse_ranges(PyObject *obj, Ranges *r) {
    PyObject *seq = PySequence_Fast(obj, "cjk_ranges must be a sequence of (lo, hi) pairs");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_RANGES) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "too many cjk_ranges");
        return -1;
    }
    r->n = (int)n;
    r->min = 0x110000;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned long lo, hi;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "kk", &lo, &hi)) {
            Py_DECREF(seq);
            return -1;
        }
        r->lo[i] = (Py_UCS4)lo;
        r->hi[i] = (Py_UCS4)hi;
        if (lo < r->min) r->min = (Py_UCS4)lo;
    }
    Py_DECREF(seq);
    return 0;
}

static PyObject *token_strings(PyObject *self, PyObject *args) {
    PyObject *texts, *ranges_obj;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO", &texts, &ranges_obj)) return NULL;
    Ranges ranges;
    if (parse_ranges(ranges_obj, &ranges) < 0) return NULL;
    PyObject *seq = PySequence_Fast(texts, "texts must be a sequence of str");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *result = PyList_New(n);
    State st = {0};
    st.long_tokens = PyDict_New();
    if (!result || !st.long_tokens || table_init(&st.tokens, 1 << 14) < 0) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *text = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyUnicode_Check(text)) {
            PyErr_Format(PyExc_TypeError, "texts[%zd] is %.80s, not str", i, Py_TYPE(text)->tp_name);
            goto fail;
        }
        PyObject *codes = codes_of(&st, &ranges, text);
        if (!codes) goto fail;
        PyList_SET_ITEM(result, i, codes);
    }
    goto done;
fail:
    Py_CLEAR(result);
done:
    Py_DECREF(seq);
    Py_XDECREF(st.long_tokens);
    table_free(&st.tokens);
    PyMem_Free(st.run);
    PyMem_Free(st.out);
    return result;
}

static PyMethodDef methods[] = {
    {"token_strings", token_strings, METH_VARARGS,
     "token_strings(texts, cjk_ranges) -> list[str]: one character per cjk-char-v1 token, equal for "
     "equal tokens across the call (see the module source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_token_codes", NULL, -1, methods};

PyMODINIT_FUNC PyInit__token_codes(void) {
    for (int b = 0; b < 128; b++)
        TOKEN_BYTE[b] = (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') ? (unsigned char)b
                        : (b >= 'A' && b <= 'Z')                         ? (unsigned char)(b + 32)
                                                                         : 0;
    return PyModule_Create(&module);
}
