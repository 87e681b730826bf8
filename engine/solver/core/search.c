/* Depth-first search for a winning line over any RuleSet (core.h); docs/solver.md says why
 * each shortcut is sound.
 *
 * The table of positions seen keeps every position's full key, not only its hash: a position
 * is taken for one seen before only when the two keys are equal byte for byte, so no hash
 * collision can prune a position wrongly and a "lost" verdict is a proof. The table is bounded:
 * when it is full it is emptied, all but the positions on the current path (which keep the walk
 * from going round a cycle). Forgetting a position whose search ended without a win only means
 * it may be searched again, never that a win is missed. Given a node budget the search is
 * deterministic: the same verdict, line and node count on any machine.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"

#define CLOCK_NODES 4096
#define PROGRESS_NODES (1u << 18)

uint64_t ZOBRIST[ZOBRIST_SIZE];

void zobrist_init(void) {
    uint64_t seed = 0x5EED5EED5EEDULL;
    for (int i = 0; i < ZOBRIST_SIZE; i++) {
        seed += 0x9E3779B97F4A7C15ULL;
        ZOBRIST[i] = mix64(seed);
    }
}

/* -- the table of positions seen ---------------------------------------------------------- */

typedef struct {
    uint64_t hash;
    uint32_t offset;         /* where the key lies in the arena */
    uint32_t length;         /* 0: a free slot */
} Slot;

typedef struct {
    Slot *slots;
    size_t mask;             /* slots - 1, a power of two */
    size_t used, limit;      /* positions held; the most before the table counts as full */
    uint8_t *arena;
    size_t arena_used, arena_size;
} Table;

static int table_open(Table *table, size_t bytes) {
    size_t slots = 1024;
    /* A third of the memory for slots (kept at most half full), the rest for the keys. */
    while (slots * 2 * sizeof(Slot) <= bytes / 3) slots *= 2;
    table->slots = calloc(slots, sizeof(Slot));
    table->mask = slots - 1;
    table->used = 0;
    table->limit = slots / 2;
    table->arena_size = bytes > slots * sizeof(Slot) + (1u << 16)
        ? bytes - slots * sizeof(Slot) : (1u << 16);
    table->arena = malloc(table->arena_size);
    table->arena_used = 0;
    return table->slots != NULL && table->arena != NULL;
}

static void table_close(Table *table) {
    free(table->slots);
    free(table->arena);
}

static void table_clear(Table *table) {
    memset(table->slots, 0, (table->mask + 1) * sizeof(Slot));
    table->used = 0;
    table->arena_used = 0;
}

static int table_full(const Table *table) {
    return table->used >= table->limit || table->arena_used + MAX_KEY > table->arena_size;
}

/* Put the position (``hash``, ``key``) in the table; 0 if it was there already (its full key
 * equal to one held), 1 if it was added. The table must not be full. */
static int table_add(Table *table, uint64_t hash, const uint8_t *key, int length) {
    size_t index = (size_t)hash & table->mask;
    for (;;) {
        Slot *slot = &table->slots[index];
        if (slot->length == 0) {
            memcpy(table->arena + table->arena_used, key, (size_t)length);
            slot->hash = hash;
            slot->offset = (uint32_t)table->arena_used;
            slot->length = (uint32_t)length;
            table->arena_used += (size_t)length;
            table->used++;
            return 1;
        }
        if (slot->hash == hash && slot->length == (uint32_t)length &&
            memcmp(table->arena + slot->offset, key, (size_t)length) == 0) {
            return 0;
        }
        index = (index + 1) & table->mask;
    }
}

/* -- the walk ----------------------------------------------------------------------------- */

typedef struct {
    uint8_t *state;          /* this frame's position */
    Move *moves;             /* its moves, in the order they are tried */
    int count, next;
} Frame;

typedef struct {
    const RuleSet *rules;
    Frame *frames;
    int depth, capacity;     /* frames in use; frames allocated */
} Path;

static int path_grow(Path *path) {
    int capacity = path->capacity ? path->capacity * 2 : 256;
    Frame *frames = realloc(path->frames, (size_t)capacity * sizeof(Frame));
    if (frames == NULL) return 0;
    for (int i = path->capacity; i < capacity; i++) {
        frames[i].state = malloc(path->rules->state_size);
        frames[i].moves = malloc(MAX_MOVES * sizeof(Move));
        if (frames[i].state == NULL || frames[i].moves == NULL) {
            path->frames = frames;
            path->capacity = i + 1;
            return 0;
        }
    }
    path->frames = frames;
    path->capacity = capacity;
    return 1;
}

static void path_free(Path *path) {
    for (int i = 0; i < path->capacity; i++) {
        free(path->frames[i].state);
        free(path->frames[i].moves);
    }
    free(path->frames);
}

static int compare_order(const void *a, const void *b) {
    const Move *x = a, *y = b;
    return (x->order > y->order) - (x->order < y->order);
}

/* Fill ``frame`` with the moves of its state to try, in order: none when a bound proves the
 * state lost; only a safe move when there is one (with reductions on). A stable sort keeps the
 * rule set's own order among equals (insertion sort: a few dozen moves). */
static void list_moves(const RuleSet *rules, Frame *frame, const SearchLimits *limits) {
    frame->next = 0;
    if (limits->reductions && rules->dead != NULL && rules->dead(frame->state)) {
        frame->count = 0;
        return;
    }
    int count = rules->moves(frame->state, frame->moves);
    if (limits->reductions && rules->safe != NULL) {
        for (int i = 0; i < count; i++) {
            if (rules->safe(frame->state, &frame->moves[i])) {
                frame->moves[0] = frame->moves[i];
                frame->count = 1;
                return;
            }
        }
    }
    rules->order(frame->state, frame->moves, count, limits->variant);
    for (int i = 1; i < count; i++) {
        Move move = frame->moves[i];
        int j = i - 1;
        while (j >= 0 && compare_order(&frame->moves[j], &move) > 0) {
            frame->moves[j + 1] = frame->moves[j];
            j--;
        }
        frame->moves[j + 1] = move;
    }
    frame->count = count;
}

static double now_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + now.tv_nsec / 1e9;
}

static uint64_t state_hash(const void *state) { return *(const uint64_t *)state; }

/* Empty the full table, then put back the positions of the current path. */
static void flush(Table *table, const Path *path, uint8_t *key) {
    table_clear(table);
    for (int i = 0; i < path->depth; i++) {
        const uint8_t *state = path->frames[i].state;
        int length = path->rules->key(state, key);
        table_add(table, state_hash(state), key, length);
    }
}

SearchOutcome search(const RuleSet *rules, const void *start, const SearchLimits *limits) {
    SearchOutcome outcome = {SEARCH_UNKNOWN, 0, 0, 0, 0, NULL, NULL};
    Table table;
    Path path = {rules, NULL, 0, 0};
    uint8_t key[MAX_KEY];
    double deadline = limits->max_seconds > 0 ? now_seconds() + limits->max_seconds : 0;
    if (!table_open(&table, limits->table_bytes) || !path_grow(&path)) {
        outcome.error = "out of memory";
        goto done;
    }
    if (rules->won(start)) {
        outcome.result = SEARCH_WON;
        goto done;
    }
    memcpy(path.frames[0].state, start, rules->state_size);
    table_add(&table, state_hash(start), key, rules->key(start, key));
    list_moves(rules, &path.frames[0], limits);
    path.depth = 1;
    while (path.depth > 0) {
        Frame *frame = &path.frames[path.depth - 1];
        if (frame->next == frame->count) {
            path.depth--;
            continue;
        }
        if (limits->max_nodes && outcome.nodes >= limits->max_nodes) goto done;
        if (outcome.nodes % CLOCK_NODES == 0 && outcome.nodes) {
            if (deadline && now_seconds() >= deadline) goto done;
            if (limits->progress && outcome.nodes % PROGRESS_NODES == 0 &&
                limits->progress(limits->context, outcome.nodes, outcome.positions)) {
                outcome.error = "stopped";
                goto done;
            }
        }
        const Move *move = &frame->moves[frame->next++];
        outcome.nodes++;
        if (path.depth == path.capacity) {
            if (!path_grow(&path)) {
                outcome.error = "out of memory";
                goto done;
            }
            frame = &path.frames[path.depth - 1];  /* the frames were moved */
        }
        Frame *child = &path.frames[path.depth];
        memcpy(child->state, frame->state, rules->state_size);
        rules->make(child->state, move);
        if (rules->won(child->state)) {
            outcome.result = SEARCH_WON;
            outcome.line_length = path.depth;
            outcome.line = malloc((size_t)path.depth * sizeof(Move));
            for (int i = 0; i < path.depth; i++) {
                outcome.line[i] = path.frames[i].moves[path.frames[i].next - 1];
            }
            goto done;
        }
        if (table_full(&table)) {
            flush(&table, &path, key);
            outcome.flushes++;
        }
        if (!table_add(&table, state_hash(child->state), key, rules->key(child->state, key))) {
            continue;
        }
        outcome.positions++;
        list_moves(rules, child, limits);
        if (child->count) path.depth++;
    }
    outcome.result = SEARCH_LOST;
done:
    table_close(&table);
    path_free(&path);
    return outcome;
}
