/* The compiled search core: what a rule set gives the search (docs/solver.md, "The compiled
 * core").
 *
 * The core is a second implementation of five heap games' rules, for search only: the Python
 * engine stays the judge of every race and replays every win the core finds before it is
 * reported. Each rule set is one C file that fills a ``RuleSet``; search.c walks any of them,
 * module.c lets Python drive them (tests compare them with the engine move for move).
 *
 * Cards are one byte, ``suit * 13 + rank - 1`` (suits S, H, D, C as engine/cards.py orders
 * them; 0..51), or NO_CARD. The two equal cards of two packs are one code: the rules treat them
 * alike (RULINGS, "Cards and deals"). Piles are numbered as the rule set's ``pile_ids`` list
 * them in the engine.
 */
#ifndef PATIENCE_CORE_H
#define PATIENCE_CORE_H

#include <stddef.h>
#include <stdint.h>

#define NO_CARD 0xFF
#define NO_PILE 0xFF
#define MAX_MOVES 512
#define MAX_KEY 512
#define MAX_PILES 32
#define MAX_FIELDS 16

#define CARD(suit, rank) ((uint8_t)((suit) * 13 + (rank) - 1))
#define SUIT(card) ((card) / 13)
#define RANK(card) ((card) % 13 + 1)
#define IS_RED(card) (SUIT(card) == 1 || SUIT(card) == 2)

/* An action is a move without piles: its number is its place in engine/moves.py's ACTIONS
 * plus one (resign, which the search never plays, is 1). */
enum { ACT_NONE = 0, ACT_RESIGN = 1, ACT_REDEAL = 2, ACT_TURN = 3, ACT_AFRESH = 4 };

/* A move, as the engine writes it: ``card [xcount] source -> target [bottom]`` or an action.
 * ``order`` is the search's sort key (lower first), set by the rule set's ``order``. */
typedef struct {
    uint8_t source, target, card, count, bottom, action;
    int16_t order;
} Move;

/* A position in the engine's terms, to load from and export to: each pile's cards bottom to
 * top (in ``pile_ids`` order) and the rule set's state fields as numbers, in the order its
 * Python codec (engine/solver/compiled.py) lists them. */
typedef struct {
    int piles;
    int lengths[MAX_PILES];
    uint8_t cards[MAX_PILES][208];
    int fields;
    long field[MAX_FIELDS];
} Layout;

/* What a rule set gives the search. A state is a fixed-size block of ``state_size`` bytes
 * whose first member is its ``uint64_t`` hash; the search copies it to make a move and drops
 * the copy to take the move back (a state is a few hundred bytes: cheaper than an undo record,
 * and a redeal, which gathers a hundred cards, needs no record at all). */
typedef struct {
    const char *name;
    size_t state_size;
    /* Set ``state`` up from ``layout``; return NULL, or why the layout is not a position. */
    const char *(*load)(void *state, const Layout *layout);
    void (*export)(const void *state, Layout *layout);
    /* The legal moves, resign left out, in the engine's order; their number. */
    int (*moves)(const void *state, Move *out);
    /* Make ``move`` (one of ``moves``), forced steps included, and keep the hash up to date. */
    void (*make)(void *state, const Move *move);
    int (*won)(const void *state);
    /* The hash worked out from scratch: equal to the kept one after any moves (tests check
     * it), and equal for any two states with equal keys. */
    uint64_t (*rehash)(const void *state);
    /* The state's key: equal for two states exactly when they are the same position up to
     * the rule set's symmetries (engine/solver/symmetry.py); its length, at most MAX_KEY. */
    int (*key)(const void *state, uint8_t *out);
    /* Optional (NULL): 1 only when no line from ``state`` wins (a proof, docs/solver.md). */
    int (*dead)(const void *state);
    /* Set each move's ``order`` for move order ``variant`` (0 the default). */
    void (*order)(const void *state, Move *moves, int count, int variant);
    /* Optional (NULL): 1 when playing ``move`` alone, leaving its siblings untried, loses no
     * win (a dominance proved in docs/solver.md). */
    int (*safe)(const void *state, const Move *move);
} RuleSet;

/* The rule sets, defined in their own files. */
extern const RuleSet FOUR_CORNERS, CORNERSTONES, CORNERSTONES_ARNOLD, PUSS_IN_THE_CORNER,
    OCTAGON;

/* Zobrist keys: ZOBRIST[i] for any i below ZOBRIST_SIZE, the same on every machine (made by a
 * fixed generator, not by rand()). */
#define ZOBRIST_SIZE 65536
extern uint64_t ZOBRIST[ZOBRIST_SIZE];
void zobrist_init(void);
/* A 64-bit mix of ``value`` (splitmix64's finaliser): for hashes combined without order. */
static inline uint64_t mix64(uint64_t value) {
    value += 0x9E3779B97F4A7C15ULL;
    value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ULL;
    value = (value ^ (value >> 27)) * 0x94D049BB133111EBULL;
    return value ^ (value >> 31);
}

/* The search (search.c). */
typedef enum { SEARCH_WON, SEARCH_LOST, SEARCH_UNKNOWN } SearchResult;

typedef struct {
    uint64_t max_nodes;      /* 0: no limit */
    double max_seconds;      /* 0: no limit */
    size_t table_bytes;      /* memory for the table of positions seen */
    int variant;             /* move order */
    int reductions;          /* 1: use ``dead`` and ``safe``; 0: the plain graph search */
    /* Called about every PROGRESS_NODES nodes with the nodes and positions so far; nonzero
     * stops the search (unknown). */
    int (*progress)(void *context, uint64_t nodes, uint64_t positions);
    void *context;
} SearchLimits;

typedef struct {
    SearchResult result;
    uint64_t nodes;          /* moves made */
    uint64_t positions;      /* distinct positions put in the table */
    uint64_t flushes;        /* times the full table was emptied (all but the current path) */
    int line_length;
    Move *line;              /* malloc'd, line_length moves; the caller frees it */
    const char *error;       /* out of memory, or a progress callback's error */
} SearchOutcome;

SearchOutcome search(const RuleSet *rules, const void *start, const SearchLimits *limits);

#endif
