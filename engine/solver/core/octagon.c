/* The Octagon (engine/rulesets/octagon.py, docs/rules/octagon.md) for the compiled core.
 *
 * Piles in the engine's ``pile_ids`` order: foundation:1..8 are 0..7 (foundation ``2 * suit +
 * pack``: 0-1 spades, 2-3 hearts, 4-5 diamonds, 6-7 clubs), aux:1..4 are 8..11, the stock 12
 * and the waste 13.
 *
 * The stock and the waste are one sequence, the talon: the waste bottom to top, then the stock
 * top to bottom. Turning a card moves the line between them by one card (OC-5); turning the
 * waste over (OC-14) moves the line back to the start, since the waste's first card is the
 * first turned again; cards leave the talon (home, onto a heap, into an empty heap) and none
 * ever comes back. So the talon is always the one it was loaded with, some cards taken out:
 * the state keeps that first talon, a bit per card still there, and the index of the stock's
 * top card (its first card still there at or after the line). Taking a card out is one bit and
 * one Zobrist key, whatever its place.
 *
 * A foundation holds its suit from the ace up, so its height is all it holds. The key applies
 * engine/solver/symmetry.py's symmetries (docs/solver.md): a suit's two foundations by their
 * pair of heights in either order, the four auxiliary heaps in any order. The hash adds up
 * mix64 of each heap's own Zobrist hash (a heap's hash does not depend on which heap it is),
 * so it is the same for heaps in any order.
 */
#include <string.h>

#include "core.h"

/* A card's suit and rank, looked up (a division is slow in the race's inner loop). */
#define S4(s) s, s, s, s, s, s, s, s, s, s, s, s, s
#define R13 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
static const uint8_t SUIT_OF[52] = {S4(0), S4(1), S4(2), S4(3)};
static const uint8_t RANK_OF[52] = {R13, R13, R13, R13};
#undef SUIT
#undef RANK
#define SUIT(card) (SUIT_OF[card])
#define RANK(card) (RANK_OF[card])

#define FOUNDATIONS 8
#define HEAPS 4
#define FIRST_HEAP 8
#define STOCK 12
#define WASTE 13
#define PILES 14
#define HEAP_MAX 24          /* 5 dealt (or 1 filled) and at most 11 built: 16 in a game */
#define TALON_MAX 128
#define DEALS 3              /* OC-14 */
#define PASS_BUDGET 64       /* choices the race through the passes tries (passes) */
#define TOTAL 104            /* OC-15 */

/* Where each kind of Zobrist key starts in ZOBRIST. */
#define Z_HEAP 0             /* + place in the heap * 52 + card */
#define Z_PAIR 2048          /* + suit * 256 + low * 16 + high */
#define Z_TALON 4096         /* + index in the talon: the card is still there */
#define Z_NEXT 4352          /* + index of the stock's top card */
#define Z_DEAL 4608          /* + deal */

typedef struct {
    uint64_t hash;           /* fixed + the sum of mix64(heap_hash[h]) */
    uint64_t fixed;          /* foundations, talon, stock line and deal, by XOR */
    uint64_t heap_hash[HEAPS];
    uint64_t present[2];     /* bit i: talon[i] is still in the talon */
    uint8_t talon[TALON_MAX];
    uint8_t talon_length;
    uint8_t next;            /* the stock's top card, or talon_length when the stock is empty */
    uint8_t deal;
    uint8_t height[FOUNDATIONS];
    uint8_t heap_length[HEAPS];
    uint8_t heap[HEAPS][HEAP_MAX];   /* bottom first; NO_CARD above the top */
} State;

/* -- the talon's bits ------------------------------------------------------------------------ */

static int bit(const State *s, int index) {
    return (int)((s->present[index >> 6] >> (index & 63)) & 1);
}

/* The last card still there below ``index`` (the waste's top when ``index`` is next), or -1. */
static int present_below(const State *s, int index) {
    for (int word = index >> 6; word >= 0; word--) {
        uint64_t bits = s->present[word];
        if (word == index >> 6) bits &= index & 63 ? (1ULL << (index & 63)) - 1 : 0;
        if (bits) return word * 64 + 63 - __builtin_clzll(bits);
    }
    return -1;
}

/* The first card still there at or after ``index``, or talon_length. */
static int present_from(const State *s, int index) {
    for (int word = index >> 6; word < 2 && index < s->talon_length; word++) {
        uint64_t bits = s->present[word];
        if (word == index >> 6) bits &= ~0ULL << (index & 63);
        if (bits) return word * 64 + __builtin_ctzll(bits);
    }
    return s->talon_length;
}

static int waste_top(const State *s) { return present_below(s, s->next); }
static int stock_left(const State *s) { return s->next < s->talon_length; }

static void set_next(State *s, int next) {
    s->fixed ^= ZOBRIST[Z_NEXT + s->next] ^ ZOBRIST[Z_NEXT + next];
    s->next = (uint8_t)next;
}

/* Take the card at ``index`` out of the talon; return it. */
static uint8_t take(State *s, int index) {
    uint8_t card = s->talon[index];
    s->present[index >> 6] &= ~(1ULL << (index & 63));
    s->fixed ^= ZOBRIST[Z_TALON + index];
    return card;
}

/* -- foundations and heaps ------------------------------------------------------------------ */

static uint64_t pair_key(const State *s, int suit) {
    int a = s->height[2 * suit], b = s->height[2 * suit + 1];
    return ZOBRIST[Z_PAIR + suit * 256 + (a < b ? a * 16 + b : b * 16 + a)];
}

static void raise_foundation(State *s, int foundation, int by) {
    int suit = foundation / 2;
    s->fixed ^= pair_key(s, suit);
    s->height[foundation] = (uint8_t)(s->height[foundation] + by);
    s->fixed ^= pair_key(s, suit);
}

static void push_heap(State *s, int h, uint8_t card) {
    int place = s->heap_length[h]++;
    s->heap[h][place] = card;
    s->heap_hash[h] ^= ZOBRIST[Z_HEAP + place * 52 + card];
}

static void pop_heap(State *s, int h) {
    int place = --s->heap_length[h];
    s->heap_hash[h] ^= ZOBRIST[Z_HEAP + place * 52 + s->heap[h][place]];
    s->heap[h][place] = NO_CARD;
}

/* The foundation of ``card``'s suit that takes it: the first whose height is one lower (OC-4),
 * or -1; ``second``, if not NULL, gets the other one when both take it, else -1. */
static int fits(const State *s, uint8_t card, int *second) {
    int first = 2 * SUIT(card), want = RANK(card) - 1;
    int a = s->height[first] == want, b = s->height[first + 1] == want;
    if (second != NULL) *second = a && b ? first + 1 : -1;
    return a ? first : b ? first + 1 : -1;
}

/* How many cards at the top of heap ``h`` are in sequence, each one lower in suit than the card
 * under it (OC-10). */
static int run_length(const State *s, int h) {
    const uint8_t *heap = s->heap[h];
    int length = 1;
    for (int i = s->heap_length[h] - 1; i > 0; i--) {
        if (SUIT(heap[i - 1]) != SUIT(heap[i]) || heap[i - 1] != heap[i] + 1) break;
        length++;
    }
    return length;
}

/* Whether ``card`` may go onto heap ``h``: its top is the next higher card of its suit (OC-8). */
static int builds_on(const State *s, int h, uint8_t card) {
    int length = s->heap_length[h];
    return length && RANK(card) < 13 && s->heap[h][length - 1] == card + 1;
}

/* Whether some card can be played (OC-5: else the engine turns). */
static int has_plays(const State *s) {
    int top = waste_top(s);
    if (top >= 0) {
        uint8_t card = s->talon[top];
        if (fits(s, card, NULL) >= 0) return 1;
        for (int h = 0; h < HEAPS; h++) {
            if (builds_on(s, h, card)) return 1;
        }
    }
    for (int h = 0; h < HEAPS; h++) {
        if (s->heap_length[h] && fits(s, s->heap[h][s->heap_length[h] - 1], NULL) >= 0) return 1;
    }
    return 0;
}

/* -- the hash and the key ------------------------------------------------------------------- */

static uint64_t combine(const State *s) {
    uint64_t hash = s->fixed;
    for (int h = 0; h < HEAPS; h++) hash += mix64(s->heap_hash[h]);
    return hash;
}

static uint64_t octagon_rehash(const void *state) {
    const State *s = state;
    uint64_t fixed = ZOBRIST[Z_NEXT + s->next] ^ ZOBRIST[Z_DEAL + s->deal];
    for (int suit = 0; suit < 4; suit++) fixed ^= pair_key(s, suit);
    for (int i = 0; i < s->talon_length; i++) {
        if (bit(s, i)) fixed ^= ZOBRIST[Z_TALON + i];
    }
    uint64_t hash = fixed;
    for (int h = 0; h < HEAPS; h++) {
        uint64_t heap = 0;
        for (int place = 0; place < s->heap_length[h]; place++) {
            heap ^= ZOBRIST[Z_HEAP + place * 52 + s->heap[h][place]];
        }
        hash += mix64(heap);
    }
    return hash;
}

/* The key: each suit's pair of heights (lower first), the heaps in sorted order (each its
 * length and cards), the talon's bits, the stock's top and the deal. Two copies of one card in
 * the talon can leave the same cards in the same order with different bits: the key then tells
 * two equal positions apart, which costs a search, never a win (docs/solver.md). */
static int octagon_key(const void *state, uint8_t *out) {
    const State *s = state;
    int length = 0;
    for (int suit = 0; suit < 4; suit++) {
        int a = s->height[2 * suit], b = s->height[2 * suit + 1];
        out[length++] = (uint8_t)(a < b ? a * 14 + b : b * 14 + a);
    }
    int order[HEAPS] = {0, 1, 2, 3};
    for (int i = 1; i < HEAPS; i++) {   /* the heaps hold NO_CARD above their tops */
        int h = order[i], j = i - 1;
        while (j >= 0 && memcmp(s->heap[order[j]], s->heap[h], HEAP_MAX) > 0) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = h;
    }
    for (int i = 0; i < HEAPS; i++) {
        int h = order[i];
        out[length++] = s->heap_length[h];
        memcpy(out + length, s->heap[h], s->heap_length[h]);
        length += s->heap_length[h];
    }
    int bytes = (s->talon_length + 7) / 8;
    for (int i = 0; i < bytes; i++) {
        out[length++] = (uint8_t)(s->present[i / 8] >> (8 * (i % 8)));
    }
    out[length++] = s->next;
    out[length++] = s->deal;
    return length;
}

/* -- loading and exporting ------------------------------------------------------------------ */

static const char *octagon_load(void *state, const Layout *layout) {
    State *s = state;
    memset(s, 0, sizeof *s);
    memset(s->heap, NO_CARD, sizeof s->heap);
    if (layout->piles != PILES) return "the Octagon has 14 piles";
    if (layout->fields != 1) return "the Octagon has one state field, the deal";
    if (layout->field[0] < 1 || layout->field[0] > DEALS) return "the deal is 1, 2 or 3";
    for (int f = 0; f < FOUNDATIONS; f++) {
        int length = layout->lengths[f];
        if (length < 1 || length > 13) return "a foundation holds its ace and up to the king";
        for (int i = 0; i < length; i++) {
            if (layout->cards[f][i] != CARD(f / 2, i + 1)) {
                return "a foundation holds its own suit from the ace up";
            }
        }
        s->height[f] = (uint8_t)length;
    }
    for (int h = 0; h < HEAPS; h++) {
        int length = layout->lengths[FIRST_HEAP + h];
        if (length > HEAP_MAX) return "an auxiliary heap is too long for the core";
        for (int i = 0; i < length; i++) push_heap(s, h, layout->cards[FIRST_HEAP + h][i]);
    }
    int waste = layout->lengths[WASTE], stock = layout->lengths[STOCK];
    if (waste + stock > TALON_MAX) return "the stock and the waste are too long for the core";
    for (int i = 0; i < waste; i++) s->talon[i] = layout->cards[WASTE][i];
    for (int i = 0; i < stock; i++) s->talon[waste + i] = layout->cards[STOCK][stock - 1 - i];
    s->talon_length = (uint8_t)(waste + stock);
    for (int i = 0; i < s->talon_length; i++) {
        s->present[i >> 6] |= 1ULL << (i & 63);
    }
    s->next = (uint8_t)waste;
    s->deal = (uint8_t)layout->field[0];
    s->hash = octagon_rehash(s);
    s->fixed = s->hash;
    for (int h = 0; h < HEAPS; h++) s->fixed -= mix64(s->heap_hash[h]);
    return NULL;
}

static void octagon_export(const void *state, Layout *layout) {
    const State *s = state;
    layout->piles = PILES;
    for (int f = 0; f < FOUNDATIONS; f++) {
        layout->lengths[f] = s->height[f];
        for (int i = 0; i < s->height[f]; i++) layout->cards[f][i] = CARD(f / 2, i + 1);
    }
    for (int h = 0; h < HEAPS; h++) {
        layout->lengths[FIRST_HEAP + h] = s->heap_length[h];
        memcpy(layout->cards[FIRST_HEAP + h], s->heap[h], s->heap_length[h]);
    }
    int waste = 0, stock = 0;
    for (int i = 0; i < s->next; i++) {
        if (bit(s, i)) layout->cards[WASTE][waste++] = s->talon[i];
    }
    for (int i = s->talon_length - 1; i >= s->next; i--) {   /* the stock, bottom first */
        if (bit(s, i)) layout->cards[STOCK][stock++] = s->talon[i];
    }
    layout->lengths[WASTE] = waste;
    layout->lengths[STOCK] = stock;
    layout->fields = 1;
    layout->field[0] = s->deal;
}

/* -- moves ---------------------------------------------------------------------------------- */

static Move transfer(int source, int target, uint8_t card, int count) {
    Move move = {(uint8_t)source, (uint8_t)target, card, (uint8_t)count, 0, ACT_NONE, 0};
    return move;
}

static Move action(int which) {
    Move move = {NO_PILE, NO_PILE, NO_CARD, 1, 0, (uint8_t)which, 0};
    return move;
}

/* The moves in the engine's order: the top of the waste home (OC-6) and onto the heaps (OC-8),
 * then each heap's top run home (OC-7, OC-10), then turn (OC-5) or redeal (OC-14). */
static int octagon_moves(const void *state, Move *out) {
    const State *s = state;
    int count = 0;
    int top = waste_top(s);
    if (top >= 0) {
        uint8_t card = s->talon[top];
        int second, first = fits(s, card, &second);
        if (first >= 0) out[count++] = transfer(WASTE, first, card, 1);
        if (second >= 0) out[count++] = transfer(WASTE, second, card, 1);
        for (int h = 0; h < HEAPS; h++) {
            if (builds_on(s, h, card)) out[count++] = transfer(WASTE, FIRST_HEAP + h, card, 1);
        }
    }
    for (int h = 0; h < HEAPS; h++) {
        int length = s->heap_length[h];
        if (!length) continue;
        int second, first = fits(s, s->heap[h][length - 1], &second);
        if (first < 0) continue;
        int run = run_length(s, h);
        for (int k = 1; k <= run; k++) {
            out[count++] = transfer(FIRST_HEAP + h, first, s->heap[h][length - k], k);
        }
        for (int k = 1; second >= 0 && k <= run; k++) {
            out[count++] = transfer(FIRST_HEAP + h, second, s->heap[h][length - k], k);
        }
    }
    if (stock_left(s)) {
        out[count++] = action(ACT_TURN);
    } else if (top >= 0 && s->deal < DEALS) {
        out[count++] = action(ACT_REDEAL);
    }
    return count;
}

/* OC-5, OC-13: the stock's top card onto the waste, or into the first empty heap while the
 * waste is empty. */
static void turn(State *s) {
    int index = s->next;
    set_next(s, present_from(s, index + 1));
    if (present_below(s, index) < 0) {
        for (int h = 0; h < HEAPS; h++) {
            if (!s->heap_length[h]) {
                push_heap(s, h, take(s, index));
                return;
            }
        }
    }
}

/* OC-14: the waste turned over, its first card turned first. */
static void redeal(State *s) {
    set_next(s, present_from(s, 0));
    s->fixed ^= ZOBRIST[Z_DEAL + s->deal] ^ ZOBRIST[Z_DEAL + s->deal + 1];
    s->deal++;
}

static void play(State *s, const Move *move) {
    if (move->source == WASTE) {
        uint8_t card = take(s, waste_top(s));
        if (move->target < FOUNDATIONS) {
            raise_foundation(s, move->target, 1);   /* OC-6 */
        } else {
            push_heap(s, move->target - FIRST_HEAP, card);   /* OC-8 */
        }
        return;
    }
    int h = move->source - FIRST_HEAP;   /* OC-7, OC-10 */
    for (int k = 0; k < move->count; k++) pop_heap(s, h);
    raise_foundation(s, move->target, move->count);
    int top = waste_top(s);
    if (!s->heap_length[h] && top >= 0) push_heap(s, h, take(s, top));   /* OC-12 */
}

static int octagon_won(const void *state) {
    const State *s = state;
    int home = 0;
    for (int f = 0; f < FOUNDATIONS; f++) home += s->height[f];
    return home == TOTAL;
}

static void octagon_make(void *state, const Move *move) {
    State *s = state;
    if (move->action == ACT_TURN) {
        turn(s);
    } else if (move->action == ACT_REDEAL) {
        redeal(s);
    } else {
        play(s, move);
    }
    /* The forced steps: OC-5 turns while nothing can be played; then a redeal that is the only
     * move left (OC-14, rules version 2), itself followed by OC-5. */
    for (;;) {
        while (stock_left(s) && !has_plays(s)) turn(s);
        if (stock_left(s) || s->deal >= DEALS || waste_top(s) < 0 || has_plays(s)) break;
        redeal(s);
    }
    s->hash = combine(s);
}

/* -- bounds (docs/solver.md, engine/solver/bounds.py) --------------------------------------- */

/* A card of a heap over every card still out of a rank it needs (octagon_buried). */
static int buried(const State *s) {
    for (int h = 0; h < HEAPS; h++) {
        uint16_t once[4] = {0}, twice[4] = {0};   /* ranks beneath, per suit */
        for (int i = 0; i < s->heap_length[h]; i++) {
            uint8_t card = s->heap[h][i];
            int suit = SUIT(card), rank = RANK(card);
            if (i) {
                int a = s->height[2 * suit], b = s->height[2 * suit + 1];
                int low = a < b ? a : b, high = a < b ? b : a;
                if (high < rank) {
                    uint16_t between = (uint16_t)(((1u << rank) - 1) & ~((2u << high) - 1));
                    if (twice[suit] & between) return 1;
                } else {
                    uint16_t between = (uint16_t)(((1u << rank) - 1) & ~((2u << low) - 1));
                    if (once[suit] & between) return 1;
                }
            }
            uint16_t mask = (uint16_t)(1u << rank);
            twice[suit] |= once[suit] & mask;
            once[suit] |= mask;
        }
    }
    return 0;
}

/* The race to the foundations (docs/solver.md, "The Octagon"): a relaxed game every winning
 * line of the real one is a line of, where a card of a heap goes home once the cards above it
 * have, and cards taken off the waste (onto a heap, or into an emptied heap) wait, free, until
 * they can go home. A suit's two foundations, per rank (``home``: copies home, 0..2):
 * - a card whose twin is home already (its rank at most the higher foundation's height when
 *   the race starts, ``top``) can only go on the lower foundation: when both copies of every
 *   lower rank are home (``both`` is one lower), exactly as in the game;
 * - above ``top`` the two foundations count as one pile that takes either copy of a rank once
 *   a copy of every lower rank is home (``level``), except that a card with its twin above it
 *   on the same heap, which goes home after its twin in every line, waits like the first kind
 *   for both copies of every lower rank.
 * No card then has a choice of place, and a card going home only ever opens more: so bringing
 * home whatever can go, as soon as it can, is best, and one greedy walk decides the relaxed
 * game. */
typedef struct {
    uint8_t home[4][15], waiting[4][15];
    uint8_t parked[4][15];   /* of the cards waiting, those holding an emptied heap */
    uint16_t ready[4];       /* per suit, a bit per rank with a card waiting */
    int holding;             /* cards parked in emptied heaps, not yet home */
    int top[4], level[4], both[4];
    int left[HEAPS];
    uint32_t second[HEAPS];  /* a bit per place in the heap: its twin lies above it */
    int emptied;             /* a heap has been (or is) empty */
    int dirty;               /* a foundation rose since the heaps were last looked at */
} Race;

static void race_raise(Race *r, int suit) {
    while (r->level[suit] < 13 && r->home[suit][r->level[suit] + 1]) {
        r->level[suit]++;
        r->dirty = 1;
    }
    while (r->both[suit] < 13 && r->home[suit][r->both[suit] + 1] == 2) {
        r->both[suit]++;
        r->dirty = 1;
    }
}

static int race_allowed(const Race *r, int suit, int rank, int second) {
    if (rank <= r->top[suit] || second) {
        if (r->both[suit] < rank - 1) return 0;
    }
    return rank <= r->level[suit] + 1;
}

/* Cards waiting that can go home now do. */
static void race_settle(Race *r, int suit) {
    for (;;) {
        int both = r->both[suit], level = r->level[suit], top = r->top[suit];
        /* The ranks that may go home: up to one above ``both``, and above ``top`` up to one
         * above ``level`` (race_allowed for a card without a twin above it). */
        unsigned allowed = (2u << (both + 1)) - 1;
        if (level + 1 > top) allowed |= ((2u << (level + 1)) - 1) & ~((2u << top) - 1);
        unsigned ready = r->ready[suit] & allowed & 0x3FFEu;
        if (!ready) return;
        int rank = __builtin_ctz(ready);
        if (!--r->waiting[suit][rank]) r->ready[suit] &= (uint16_t)~(1u << rank);
        if (r->parked[suit][rank]) {
            r->parked[suit][rank]--;
            r->holding--;
        }
        r->home[suit][rank]++;
        race_raise(r, suit);
    }
}

static void race_start(Race *r, const State *s) {
    memset(r->home, 0, sizeof r->home);
    memset(r->waiting, 0, sizeof r->waiting);
    memset(r->parked, 0, sizeof r->parked);
    memset(r->ready, 0, sizeof r->ready);
    r->holding = 0;
    for (int suit = 0; suit < 4; suit++) {
        int a = s->height[2 * suit], b = s->height[2 * suit + 1];
        int low = a < b ? a : b, high = a < b ? b : a;
        for (int rank = 1; rank <= high; rank++) r->home[suit][rank] = rank <= low ? 2 : 1;
        r->top[suit] = r->level[suit] = high;
        r->both[suit] = low;
    }
    r->emptied = 0;
    r->dirty = 1;
    for (int h = 0; h < HEAPS; h++) {
        int length = s->heap_length[h];
        r->left[h] = length;
        r->emptied |= !length;
        r->second[h] = 0;
        uint64_t above = 0;
        for (int i = length - 1; i >= 0; i--) {
            uint8_t card = s->heap[h][i];
            if (above >> card & 1) r->second[h] |= 1u << i;
            above |= 1ULL << card;
        }
    }
}

/* Whether ``card`` (``second``: its twin went home before it) can go home now; if so it goes. */
static int race_home(Race *r, uint8_t card, int second) {
    int suit = SUIT(card), rank = RANK(card);
    if (!race_allowed(r, suit, rank, second)) return 0;
    if (r->home[suit][rank] < 2) r->home[suit][rank]++;
    race_raise(r, suit);
    race_settle(r, suit);
    return 1;
}

static void race_wait(Race *r, uint8_t card, int parks) {
    r->waiting[SUIT(card)][RANK(card)]++;
    r->ready[SUIT(card)] |= (uint16_t)(1u << RANK(card));
    if (parks) {
        r->parked[SUIT(card)][RANK(card)]++;
        r->holding++;
    }
    race_settle(r, SUIT(card));
}

static int race_empty_heaps(const Race *r) {
    int empty = 0;
    for (int h = 0; h < HEAPS; h++) empty += !r->left[h];
    return empty;
}

/* The heaps' cards home, as far as they go. */
static void race_heaps(Race *r, const State *s) {
    while (r->dirty) {
        r->dirty = 0;
        for (int h = 0; h < HEAPS; h++) {
            while (r->left[h] && race_home(r, s->heap[h][r->left[h] - 1],
                                           (int)(r->second[h] >> (r->left[h] - 1) & 1))) {
                r->left[h]--;
            }
            r->emptied |= !r->left[h];
        }
    }
}

static int race_lost(const Race *r) {
    for (int h = 0; h < HEAPS; h++) {
        if (r->left[h]) return 1;
    }
    for (int suit = 0; suit < 4; suit++) {
        if (r->both[suit] < 13) return 1;
    }
    return 0;
}

/* The race with the stock and the waste in their order: the passes left through the talon,
 * each card turned onto the waste in turn, the waste's top taken off only when it can go home,
 * onto a heap (a card one higher of its suit is the top of a heap, waits off its place or is
 * home: it may still have been on a heap then), or into an emptied heap that no card taken
 * off before holds (a heap is emptied once its cards are home; a card in it holds it until
 * that card goes home); the others stay, under the cards turned after them, until the next
 * pass. Taking off a card that can go home or onto a heap never hurts, so the walk does it at
 * once; whether to put the top into an emptied heap or to turn another card first is a choice,
 * and the walk tries both, up to ``*budget`` times in all (when the budget runs out it says the
 * game may be won). With the stock used up in the last pass there is no choice. Returns whether
 * the relaxed game can be won. */
typedef struct {
    Race race;
    int pass, waste_length, stock_length, stock_next;
    int unlimited;           /* out of budget: any card may go into an emptied heap */
    uint8_t waste[TALON_MAX], stock[TALON_MAX];
} Walk;

static int walk(const State *s, Walk *w, int *budget) {
    Race *r = &w->race;
    for (;;) {
        race_heaps(r, s);
        if (w->waste_length) {
            uint8_t card = w->waste[w->waste_length - 1];
            int suit = SUIT(card), rank = RANK(card);
            if (race_home(r, card, 0)) {
                w->waste_length--;
                continue;
            }
            int off = 0;
            if (rank < 13) {
                off = r->home[suit][rank + 1] || r->waiting[suit][rank + 1];
                for (int h = 0; !off && h < HEAPS; h++) {
                    off = r->left[h] && s->heap[h][r->left[h] - 1] == card + 1;
                }
            }
            if (off) {
                w->waste_length--;
                race_wait(r, card, 0);
                continue;
            }
            if (w->unlimited ? r->emptied : race_empty_heaps(r) > r->holding) {
                int last = w->pass == DEALS && w->stock_next == w->stock_length;
                if (!last && !w->unlimited && *budget > 0) {
                    (*budget)--;
                    Walk parked = *w;
                    parked.waste_length--;
                    race_wait(&parked.race, card, 1);
                    if (walk(s, &parked, budget)) return 1;
                } else {
                    /* No choice left, or no budget: then any card may go into an emptied heap
                     * from here on, held or not (a relaxation of the choices not tried). */
                    w->unlimited |= !last;
                    w->waste_length--;
                    race_wait(r, card, !w->unlimited);
                    continue;
                }
            }
        }
        if (w->stock_next < w->stock_length) {
            w->waste[w->waste_length++] = w->stock[w->stock_next++];
            continue;
        }
        if (w->pass == DEALS) break;
        /* OC-14: the waste turned over as the next pass's stock, its first card first. */
        w->pass++;
        memcpy(w->stock, w->waste, (size_t)w->waste_length);
        w->stock_length = w->waste_length;
        w->stock_next = 0;
        w->waste_length = 0;
    }
    return !w->waste_length && !race_lost(r);
}

static int passes(const State *s) {
    Walk w;
    race_start(&w.race, s);
    w.pass = s->deal;
    w.unlimited = 0;
    w.waste_length = w.stock_length = w.stock_next = 0;
    for (int i = 0; i < s->talon_length; i++) {
        if (!bit(s, i)) continue;
        if (i < s->next) w.waste[w.waste_length++] = s->talon[i];
        else w.stock[w.stock_length++] = s->talon[i];
    }
    int budget = PASS_BUDGET;
    return !walk(s, &w, &budget);
}

static int octagon_dead(const void *state) {
    const State *s = state;
    return buried(s) || passes(s);
}

/* -- reductions (docs/solver.md, "The Octagon") --------------------------------------------- */

/* The other foundation of ``foundation``'s suit. */
static int other(int foundation) { return foundation ^ 1; }

static int octagon_safe(const void *state, const Move *move) {
    const State *s = state;
    if (move->action != ACT_NONE || move->target >= FOUNDATIONS || move->count != 1) return 0;
    int target = move->target;
    /* Only onto the lower foundation of the suit (or one of two equal): both cards of the rank
     * below are home then, so nothing is ever built on the card, and no other card can take
     * its place on this foundation. */
    if (s->height[other(target)] < s->height[target]) return 0;
    if (move->source != WASTE) {
        /* Home from a heap: safe in any deal unless it empties the heap, which a card from the
         * waste or the next turned card would then fill, unless the talon is empty. */
        int h = move->source - FIRST_HEAP;
        return s->heap_length[h] >= 2 || (s->present[0] | s->present[1]) == 0;
    }
    /* Home from the waste: when no heap is empty and none can be emptied before this card
     * leaves the talon (the race to the foundations with the other cards of the talon free
     * empties none; in the last deal only the stock's cards, as the waste under this card stays
     * there until it goes). */
    for (int h = 0; h < HEAPS; h++) {
        if (!s->heap_length[h]) return 0;
    }
    Race r;
    race_start(&r, s);
    int top = waste_top(s);
    for (int i = s->deal == DEALS ? s->next : 0; i < s->talon_length; i++) {
        if (bit(s, i) && i != top) race_wait(&r, s->talon[i], 0);
    }
    race_heaps(&r, s);
    return !r.emptied;
}

/* -- move order ----------------------------------------------------------------------------- */

/* Moves home open now: as many as the engine would list (the Python search's look-ahead). */
static int moves_home(const State *s) {
    Move moves[MAX_MOVES];
    int count = octagon_moves(s, moves), home = 0;
    for (int i = 0; i < count; i++) {
        home += moves[i].action == ACT_NONE && moves[i].target < FOUNDATIONS;
    }
    return home;
}

static int opened(const State *s, const Move *move) {
    State after = *s;
    octagon_make(&after, move);
    return moves_home(&after);
}

/* Variant 0 is engine/solver/search.py's order: moves home first (the engine's order), then
 * the others (onto a heap, turn) by how many moves home the position after them offers, most
 * first, then redeal. Variant 1: home first, the longest run first and cards from the heaps
 * before the waste; then builds; then turn. Variant 2: builds onto a heap first (by look-ahead),
 * then home, then turn. Variant 3: variant 0, but building onto a heap (by look-ahead) always
 * before turning. (Turning before building, to keep the heaps clear for the next deals, wins
 * nothing: the search then never comes back to build in time.) Variants 4 and up:
 * variant 0 with the moves home, and the others, shuffled a little, each variant its own way
 * (by a hash of the position and the variant: the same on every machine), for a portfolio of
 * searches that start down different lines. */
static void octagon_order(const void *state, Move *moves, int count, int variant) {
    const State *s = state;
    int others = 0;
    for (int i = 0; i < count; i++) {
        Move *move = &moves[i];
        int home = move->action == ACT_NONE && move->target < FOUNDATIONS;
        int build = move->action == ACT_NONE && !home;
        others += build || move->action == ACT_TURN;
        if (move->action == ACT_REDEAL) {
            move->order = 1000;
        } else if (variant == 1) {
            move->order = (int16_t)(home ? (move->source == WASTE ? 20 : 20 - move->count)
                                    : build ? 100 : 200);
        } else if (variant == 2) {
            move->order = (int16_t)(build ? 0 : home ? 300 : 400);
        } else if (variant == 3) {
            move->order = (int16_t)(home ? 0 : build ? 100 : 300);
        } else {
            move->order = (int16_t)(home ? 0 : 100);
        }
    }
    if (variant >= 4) {
        for (int i = 0; i < count; i++) {
            uint64_t noise = mix64(s->hash ^ (uint64_t)variant * 0x9E3779B97F4A7C15ULL ^
                                   (uint64_t)(i + 1) * 0xD1B54A32D192ED03ULL);
            if (moves[i].action != ACT_REDEAL) {
                moves[i].order = (int16_t)(moves[i].order + noise % 3);
            }
        }
    }
    if (others < 2 || variant == 1) return;
    for (int i = 0; i < count; i++) {
        Move *move = &moves[i];
        int home = move->action == ACT_NONE && move->target < FOUNDATIONS;
        if (move->action != ACT_REDEAL && !home) {
            int gain = opened(s, move);
            if (gain > 99) gain = 99;
            move->order = (int16_t)(move->order + 99 - gain);
        }
    }
}

const RuleSet OCTAGON = {
    .name = "octagon",
    .state_size = sizeof(State),
    .load = octagon_load,
    .export = octagon_export,
    .moves = octagon_moves,
    .make = octagon_make,
    .won = octagon_won,
    .rehash = octagon_rehash,
    .key = octagon_key,
    .dead = octagon_dead,
    .order = octagon_order,
    .safe = octagon_safe,
};
