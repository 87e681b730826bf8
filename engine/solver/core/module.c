/* engine.solver._core: the compiled search core seen from Python (engine/solver/compiled.py
 * is its only user). ``Walker`` plays one rule set's moves step by step, for the tests that
 * hold the core against the engine; ``solve`` runs the search (search.c) without the GIL. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "core.h"

/* While the rule sets are written one file each, a file not yet there is left out (weak). */
extern const RuleSet FOUR_CORNERS __attribute__((weak));
extern const RuleSet CORNERSTONES __attribute__((weak));
extern const RuleSet CORNERSTONES_ARNOLD __attribute__((weak));
extern const RuleSet PUSS_IN_THE_CORNER __attribute__((weak));
extern const RuleSet OCTAGON __attribute__((weak));

static const RuleSet *const RULE_SETS[] = {
    &FOUR_CORNERS, &CORNERSTONES, &CORNERSTONES_ARNOLD, &PUSS_IN_THE_CORNER, &OCTAGON,
};
#define RULE_SET_COUNT (sizeof RULE_SETS / sizeof RULE_SETS[0])

static const RuleSet *find_rules(const char *name) {
    for (size_t i = 0; i < RULE_SET_COUNT; i++) {
        if (RULE_SETS[i] != NULL && strcmp(RULE_SETS[i]->name, name) == 0) return RULE_SETS[i];
    }
    PyErr_Format(PyExc_KeyError, "the compiled core has no rule set %s", name);
    return NULL;
}

/* Read (piles: sequence of bytes, fields: sequence of int) into ``layout``. */
static int read_layout(PyObject *piles, PyObject *fields, Layout *layout) {
    PyObject *pile_list = PySequence_Fast(piles, "piles: a sequence of bytes");
    if (pile_list == NULL) return 0;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(pile_list);
    if (count > MAX_PILES) {
        Py_DECREF(pile_list);
        PyErr_SetString(PyExc_ValueError, "too many piles");
        return 0;
    }
    layout->piles = (int)count;
    for (Py_ssize_t i = 0; i < count; i++) {
        char *data;
        Py_ssize_t length;
        if (PyBytes_AsStringAndSize(PySequence_Fast_GET_ITEM(pile_list, i), &data, &length) < 0 ||
            length > (Py_ssize_t)sizeof layout->cards[0]) {
            Py_DECREF(pile_list);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a pile is too long");
            return 0;
        }
        for (Py_ssize_t j = 0; j < length; j++) {
            if ((uint8_t)data[j] >= 52) {
                Py_DECREF(pile_list);
                PyErr_SetString(PyExc_ValueError, "a card code is 0..51");
                return 0;
            }
        }
        memcpy(layout->cards[i], data, (size_t)length);
        layout->lengths[i] = (int)length;
    }
    Py_DECREF(pile_list);
    PyObject *field_list = PySequence_Fast(fields, "fields: a sequence of int");
    if (field_list == NULL) return 0;
    count = PySequence_Fast_GET_SIZE(field_list);
    if (count > MAX_FIELDS) {
        Py_DECREF(field_list);
        PyErr_SetString(PyExc_ValueError, "too many fields");
        return 0;
    }
    layout->fields = (int)count;
    for (Py_ssize_t i = 0; i < count; i++) {
        layout->field[i] = PyLong_AsLong(PySequence_Fast_GET_ITEM(field_list, i));
    }
    Py_DECREF(field_list);
    return !PyErr_Occurred();
}

static PyObject *layout_to_python(const Layout *layout) {
    PyObject *piles = PyList_New(layout->piles);
    PyObject *fields = PyList_New(layout->fields);
    if (piles == NULL || fields == NULL) goto fail;
    for (int i = 0; i < layout->piles; i++) {
        PyObject *pile = PyBytes_FromStringAndSize((const char *)layout->cards[i],
                                                   layout->lengths[i]);
        if (pile == NULL) goto fail;
        PyList_SET_ITEM(piles, i, pile);
    }
    for (int i = 0; i < layout->fields; i++) {
        PyObject *field = PyLong_FromLong(layout->field[i]);
        if (field == NULL) goto fail;
        PyList_SET_ITEM(fields, i, field);
    }
    return Py_BuildValue("(NN)", piles, fields);
fail:
    Py_XDECREF(piles);
    Py_XDECREF(fields);
    return NULL;
}

/* A move as (source, target, card, count, bottom, action); NO_PILE and NO_CARD as None. */
static PyObject *move_to_python(const Move *move) {
    PyObject *source = move->source == NO_PILE ? Py_NewRef(Py_None) : PyLong_FromLong(move->source);
    PyObject *target = move->target == NO_PILE ? Py_NewRef(Py_None) : PyLong_FromLong(move->target);
    PyObject *card = move->card == NO_CARD ? Py_NewRef(Py_None) : PyLong_FromLong(move->card);
    return Py_BuildValue("(NNNiNi)", source, target, card, move->count,
                         PyBool_FromLong(move->bottom), move->action);
}

static PyObject *moves_to_python(const Move *moves, int count) {
    PyObject *list = PyList_New(count);
    if (list == NULL) return NULL;
    for (int i = 0; i < count; i++) {
        PyObject *move = move_to_python(&moves[i]);
        if (move == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, move);
    }
    return list;
}

/* -- Walker ------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    const RuleSet *rules;
    void *state;
    Move moves[MAX_MOVES];
    int count;               /* moves listed for the current state */
} Walker;

static int Walker_init(Walker *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"rule_set", "piles", "fields", NULL};
    const char *name;
    PyObject *piles, *fields;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sOO", names, &name, &piles, &fields)) {
        return -1;
    }
    self->rules = find_rules(name);
    if (self->rules == NULL) return -1;
    Layout *layout = PyMem_Malloc(sizeof(Layout));
    PyMem_Free(self->state);
    self->state = PyMem_Calloc(1, self->rules->state_size);
    if (layout == NULL || self->state == NULL) {
        PyMem_Free(layout);
        PyErr_NoMemory();
        return -1;
    }
    int read = read_layout(piles, fields, layout);
    const char *wrong = read ? self->rules->load(self->state, layout) : NULL;
    PyMem_Free(layout);
    if (!read) return -1;
    if (wrong != NULL) {
        PyErr_SetString(PyExc_ValueError, wrong);
        return -1;
    }
    self->count = self->rules->moves(self->state, self->moves);
    return 0;
}

static void Walker_dealloc(Walker *self) {
    PyMem_Free(self->state);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Walker_moves(Walker *self, PyObject *unused) {
    return moves_to_python(self->moves, self->count);
}

static PyObject *Walker_ordered(Walker *self, PyObject *arg) {
    long variant = PyLong_AsLong(arg);
    if (variant == -1 && PyErr_Occurred()) return NULL;
    Move moves[MAX_MOVES];
    memcpy(moves, self->moves, sizeof moves);
    self->rules->order(self->state, moves, self->count, (int)variant);
    PyObject *list = moves_to_python(moves, self->count);
    if (list == NULL) return NULL;
    PyObject *orders = PyList_New(self->count);
    for (int i = 0; orders != NULL && i < self->count; i++) {
        PyList_SET_ITEM(orders, i, PyLong_FromLong(moves[i].order));
    }
    return Py_BuildValue("(NN)", list, orders);
}

static int move_index(Walker *self, PyObject *arg) {
    long index = PyLong_AsLong(arg);
    if (index == -1 && PyErr_Occurred()) return -1;
    if (index < 0 || index >= self->count) {
        PyErr_SetString(PyExc_IndexError, "no such move");
        return -1;
    }
    return (int)index;
}

static PyObject *Walker_play(Walker *self, PyObject *arg) {
    int index = move_index(self, arg);
    if (index < 0) return NULL;
    Move move = self->moves[index];
    self->rules->make(self->state, &move);
    self->count = self->rules->moves(self->state, self->moves);
    Py_RETURN_NONE;
}

static PyObject *Walker_safe(Walker *self, PyObject *arg) {
    int index = move_index(self, arg);
    if (index < 0) return NULL;
    if (self->rules->safe == NULL) Py_RETURN_FALSE;
    return PyBool_FromLong(self->rules->safe(self->state, &self->moves[index]));
}

static PyObject *Walker_export(Walker *self, PyObject *unused) {
    Layout *layout = PyMem_Calloc(1, sizeof(Layout));
    if (layout == NULL) return PyErr_NoMemory();
    self->rules->export(self->state, layout);
    PyObject *result = layout_to_python(layout);
    PyMem_Free(layout);
    return result;
}

static PyObject *Walker_won(Walker *self, PyObject *unused) {
    return PyBool_FromLong(self->rules->won(self->state));
}

static PyObject *Walker_dead(Walker *self, PyObject *unused) {
    return PyBool_FromLong(self->rules->dead != NULL && self->rules->dead(self->state));
}

static PyObject *Walker_hash(Walker *self, PyObject *unused) {
    return PyLong_FromUnsignedLongLong(*(const uint64_t *)self->state);
}

static PyObject *Walker_rehash(Walker *self, PyObject *unused) {
    return PyLong_FromUnsignedLongLong(self->rules->rehash(self->state));
}

static PyObject *Walker_key(Walker *self, PyObject *unused) {
    uint8_t key[MAX_KEY];
    int length = self->rules->key(self->state, key);
    return PyBytes_FromStringAndSize((const char *)key, length);
}

static PyMethodDef Walker_methods[] = {
    {"moves", (PyCFunction)Walker_moves, METH_NOARGS,
     "The legal moves, resign left out, as (source, target, card, count, bottom, action)."},
    {"ordered", (PyCFunction)Walker_ordered, METH_O,
     "(moves, orders): the moves with the search's sort keys for a move order variant."},
    {"play", (PyCFunction)Walker_play, METH_O, "Make the move of that index in moves()."},
    {"safe", (PyCFunction)Walker_safe, METH_O,
     "Whether the move of that index is one the search may play alone (a reduction)."},
    {"export", (PyCFunction)Walker_export, METH_NOARGS, "(piles, fields) of the position."},
    {"won", (PyCFunction)Walker_won, METH_NOARGS, "Whether the position is won."},
    {"dead", (PyCFunction)Walker_dead, METH_NOARGS, "Whether a bound proves it lost."},
    {"hash", (PyCFunction)Walker_hash, METH_NOARGS, "The hash kept up to date by moves."},
    {"rehash", (PyCFunction)Walker_rehash, METH_NOARGS, "The hash worked out afresh."},
    {"key", (PyCFunction)Walker_key, METH_NOARGS, "The table's key of the position."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject WalkerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "engine.solver._core.Walker",
    .tp_doc = "Walker(rule_set, piles, fields): one position of a rule set, moved step by step.",
    .tp_basicsize = sizeof(Walker),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Walker_init,
    .tp_dealloc = (destructor)Walker_dealloc,
    .tp_methods = Walker_methods,
};

/* -- solve -------------------------------------------------------------------------------- */

typedef struct {
    PyObject *callback;
    int failed;
} Progress;

static int call_progress(void *context, uint64_t nodes, uint64_t positions) {
    Progress *progress = context;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *result = PyObject_CallFunction(progress->callback, "KK",
                                             (unsigned long long)nodes,
                                             (unsigned long long)positions);
    int stop = result == NULL || PyObject_IsTrue(result) == 1;
    if (result == NULL) progress->failed = 1;
    Py_XDECREF(result);
    PyGILState_Release(gil);
    return stop;
}

static PyObject *core_solve(PyObject *module, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"rule_set", "piles", "fields", "nodes", "seconds", "table_mb",
                            "variant", "reductions", "progress", NULL};
    const char *name;
    PyObject *piles, *fields, *callback = Py_None;
    unsigned long long nodes = 0;
    double seconds = 0;
    Py_ssize_t table_mb = 256;
    int variant = 0, reductions = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sOO|KdnipO", names, &name, &piles, &fields,
                                     &nodes, &seconds, &table_mb, &variant, &reductions,
                                     &callback)) {
        return NULL;
    }
    const RuleSet *rules = find_rules(name);
    if (rules == NULL) return NULL;
    Layout *layout = PyMem_Malloc(sizeof(Layout));
    void *state = PyMem_Calloc(1, rules->state_size);
    if (layout == NULL || state == NULL) {
        PyMem_Free(layout);
        PyMem_Free(state);
        return PyErr_NoMemory();
    }
    int read = read_layout(piles, fields, layout);
    const char *wrong = read ? rules->load(state, layout) : NULL;
    PyMem_Free(layout);
    if (!read || wrong != NULL) {
        PyMem_Free(state);
        if (wrong != NULL) PyErr_SetString(PyExc_ValueError, wrong);
        return NULL;
    }
    Progress progress = {callback, 0};
    SearchLimits limits = {nodes, seconds, (size_t)table_mb << 20, variant, reductions,
                           callback == Py_None ? NULL : call_progress, &progress};
    SearchOutcome outcome;
    Py_BEGIN_ALLOW_THREADS
    outcome = search(rules, state, &limits);
    Py_END_ALLOW_THREADS
    PyMem_Free(state);
    if (progress.failed) {
        free(outcome.line);
        return NULL;
    }
    if (outcome.error != NULL && strcmp(outcome.error, "stopped") != 0) {
        free(outcome.line);
        return PyErr_NoMemory();
    }
    PyObject *line = moves_to_python(outcome.line, outcome.line_length);
    free(outcome.line);
    if (line == NULL) return NULL;
    static const char *RESULTS[] = {"won", "lost", "unknown"};
    return Py_BuildValue("{s:s,s:N,s:K,s:K,s:K}", "result", RESULTS[outcome.result],
                         "line", line, "nodes", (unsigned long long)outcome.nodes,
                         "positions", (unsigned long long)outcome.positions,
                         "flushes", (unsigned long long)outcome.flushes);
}

static PyObject *core_rule_sets(PyObject *module, PyObject *unused) {
    PyObject *names = PyList_New(0);
    for (size_t i = 0; names != NULL && i < RULE_SET_COUNT; i++) {
        if (RULE_SETS[i] == NULL) continue;
        PyObject *name = PyUnicode_FromString(RULE_SETS[i]->name);
        if (name == NULL || PyList_Append(names, name) < 0) {
            Py_XDECREF(name);
            Py_DECREF(names);
            return NULL;
        }
        Py_DECREF(name);
    }
    return names;
}

static PyMethodDef core_methods[] = {
    {"solve", (PyCFunction)(void (*)(void))core_solve, METH_VARARGS | METH_KEYWORDS,
     "solve(rule_set, piles, fields, nodes=0, seconds=0.0, table_mb=256, variant=0, "
     "reductions=True, progress=None) -> dict: result, line, nodes, positions, flushes."},
    {"rule_sets", core_rule_sets, METH_NOARGS, "The rule sets the core knows."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_core",
    .m_doc = "The compiled search core (docs/solver.md, \"The compiled core\").",
    .m_size = -1,
    .m_methods = core_methods,
};

PyMODINIT_FUNC PyInit__core(void) {
    zobrist_init();
    if (PyType_Ready(&WalkerType) < 0) return NULL;
    PyObject *module = PyModule_Create(&core_module);
    if (module == NULL) return NULL;
    if (PyModule_AddObjectRef(module, "Walker", (PyObject *)&WalkerType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
