/* The Four Corners for the compiled core (core.h): the rules of engine/rulesets/four_corners.py
 * (rule ids FC-n of docs/rules/four-corners.md), a bound and a dominance for the last deal, and
 * move orders. docs/solver.md, "The compiled core", "Four Corners", argues the bound and the
 * dominance.
 *
 * Piles in the engine's ``pile_ids`` order: heaps 0..11 (left:1..6, right:1..6, the deal order
 * of FC-3), foundations 12..19 (ace:1..4, king:1..4; row r holds suit r, FC-2), stock 20,
 * turned 21. A foundation is kept as the rank it takes next: an ace foundation 1 (empty: its
 * ace) .. 13, 14 once complete; a king foundation 13 (empty: its king) .. 1, 0 once complete.
 * Its cards follow from that: the suit's ranks from the ace up, or from the king down.
 */
#include <string.h>

#include "core.h"

enum { HEAPS = 12, ROWS = 4, FOUNDATIONS = 8, STOCK = 20, TURNED = 21, PILES = 22, DEALS = 3,
       CARDS = 104, HEAP_CAP = 40 };
/* A heap is dealt at most 9 cards (FC-3: at most 104 - 8 round 12 heaps), and cards are put on
 * it only in suit one rank apart (FC-10): at most the 26 cards of one suit. ``load`` takes a
 * position only if no heap of it can outgrow HEAP_CAP. */

/* Where each part of the position takes its Zobrist keys. */
enum {
    Z_HEAP = 0,                                   /* + (heap * HEAP_CAP + depth) * 52 + card */
    Z_FOUNDATION = Z_HEAP + HEAPS * HEAP_CAP * 52, /* + foundation * 16 + rank wanted */
    Z_STOCK = Z_FOUNDATION + FOUNDATIONS * 16,    /* + depth * 52 + card */
    Z_DEAL = Z_STOCK + CARDS * 52,                /* + deal */
    Z_TURNED = Z_DEAL + 4,                        /* + card */
    Z_NEXT = Z_TURNED + 52,                       /* + heap */
    Z_END = Z_NEXT + HEAPS,
};
_Static_assert(Z_END <= ZOBRIST_SIZE, "the Zobrist keys run out");

typedef struct {
    uint64_t hash;
    uint8_t want[FOUNDATIONS];   /* the rank each foundation takes next (see above) */
    uint8_t length[HEAPS];
    uint8_t deal;                /* 1..3 (FC-15) */
    uint8_t next_heap;           /* the heap the next card turned falls to (FC-3, FC-7) */
    uint8_t turned;              /* a card waiting for its foundation (FC-6), or NO_CARD */
    uint8_t stock_length;
    uint8_t heap[HEAPS][HEAP_CAP];
    uint8_t stock[CARDS];        /* bottom first: the next card to turn is the last */
} State;

/* The foundation each heap lies next to (FC-2): a left side heap the ace foundation of its
 * row, a right side heap the king foundation; -1 for a corner. */
static const int8_t NEXT_TO[HEAPS] = {-1, 0, 1, 2, 3, -1, -1, 4, 5, 6, 7, -1};
static const uint8_t WON[FOUNDATIONS] = {14, 14, 14, 14, 0, 0, 0, 0};

#define TOP(s, h) ((s)->heap[h][(s)->length[h] - 1])

/* RANK and SUIT of core.h by table: the hot loops ask them of every card they look at. */
#define R13(suit) suit, suit, suit, suit, suit, suit, suit, suit, suit, suit, suit, suit, suit
static const uint8_t SUIT_OF[52] = {R13(0), R13(1), R13(2), R13(3)};
#define RANKS13 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
static const uint8_t RANK_OF[52] = {RANKS13, RANKS13, RANKS13, RANKS13};

static inline uint64_t z_heap(int heap, int depth, int card) {
    return ZOBRIST[Z_HEAP + (heap * HEAP_CAP + depth) * 52 + card];
}

static inline uint64_t z_foundation(int place, int want) {
    return ZOBRIST[Z_FOUNDATION + place * 16 + want];
}

/* What the hash holds besides the piles: the deal, and while a card waits (a deal in
 * progress) that card and the heap it was turned for. Once a deal is complete the next heap
 * is never used again (a redeal starts at left:1), so it is left out of the key and hash. */
static inline uint64_t z_misc(const State *s) {
    uint64_t hash = ZOBRIST[Z_DEAL + s->deal];
    if (s->turned != NO_CARD) {
        hash ^= ZOBRIST[Z_TURNED + s->turned] ^ ZOBRIST[Z_NEXT + s->next_heap];
    }
    return hash;
}

static inline void heap_push(State *s, int heap, int card) {
    s->hash ^= z_heap(heap, s->length[heap], card);
    s->heap[heap][s->length[heap]++] = (uint8_t)card;
}

static inline int heap_pop(State *s, int heap) {
    int card = s->heap[heap][--s->length[heap]];
    s->hash ^= z_heap(heap, s->length[heap], card);
    return card;
}

/* Put ``card`` on foundation ``place``, which takes it. */
static inline void foundation_push(State *s, int place) {
    int old = s->want[place], now = place < ROWS ? old + 1 : old - 1;
    s->hash ^= z_foundation(place, old) ^ z_foundation(place, now);
    s->want[place] = (uint8_t)now;
}

static int won(const void *state) {
    return memcmp(((const State *)state)->want, WON, FOUNDATIONS) == 0;
}

/* -- dealing (FC-3 to FC-8, FC-13 to FC-15) ------------------------------------------------ */

/* The foundations ``card``, turned for ``heap``, goes to during a deal, in ``out``; their
 * number: the first ace or king of a suit to its own place from any heap (FC-4); any other card
 * to the foundations it fits, any from a corner, only the one next to a side heap (FC-5). */
static int deal_targets(const State *s, int card, int heap, int out[2]) {
    int rank = RANK(card), ace = SUIT(card), king = ace + ROWS;
    if (rank == 1 && s->want[ace] == 1) {
        out[0] = ace;
        return 1;
    }
    if (rank == 13 && s->want[king] == 13) {
        out[0] = king;
        return 1;
    }
    int up = rank == s->want[ace], down = rank == s->want[king];
    int beside = NEXT_TO[heap];
    if (beside >= 0) {
        up = up && beside == ace;
        down = down && beside == king;
    }
    int count = 0;
    if (up) out[count++] = ace;
    if (down) out[count++] = king;
    return count;
}

/* Turn cards round the heaps until the stock is out or a card waits for a choice (FC-6),
 * sending home each card that must go (FC-4, FC-5); a card sent home does not use up its heap
 * (FC-7). */
static void deal_on(State *s) {
    while (s->stock_length) {
        int card = s->stock[--s->stock_length];
        s->hash ^= ZOBRIST[Z_STOCK + s->stock_length * 52 + card];
        int heap = s->next_heap, targets[2];
        int count = deal_targets(s, card, heap, targets);
        if (count == 0) {
            heap_push(s, heap, card);
            s->next_heap = (uint8_t)((heap + 1) % HEAPS);
        } else if (count == 1) {
            foundation_push(s, targets[0]);
        } else {
            s->turned = (uint8_t)card;
            return;
        }
    }
}

/* FC-14: gather the heaps in deal order, each heap's lowest card first, and deal again. */
static void redeal(State *s) {
    int count = 0;
    for (int h = 0; h < HEAPS; h++) count += s->length[h];
    int at = count;
    for (int h = 0; h < HEAPS; h++) {
        for (int i = 0; i < s->length[h]; i++) {
            int card = s->heap[h][i];
            s->hash ^= z_heap(h, i, card);
            at--;
            s->stock[at] = (uint8_t)card;
            s->hash ^= ZOBRIST[Z_STOCK + at * 52 + card];
        }
        s->length[h] = 0;
    }
    s->stock_length = (uint8_t)count;
    s->next_heap = 0;
    s->deal++;
    deal_on(s);
}

/* Whether some heap's top card can go home (FC-9) or onto another heap (FC-10). */
static int has_transfer(const State *s) {
    uint16_t tops[52] = {0};
    for (int h = 0; h < HEAPS; h++) {
        if (s->length[h]) tops[TOP(s, h)] |= (uint16_t)(1u << h);
    }
    for (int h = 0; h < HEAPS; h++) {
        if (!s->length[h]) continue;
        int card = TOP(s, h), rank = RANK_OF[card], suit = SUIT_OF[card];
        if (s->want[suit] == rank || s->want[suit + ROWS] == rank) return 1;
        if ((rank > 1 && tops[card - 1]) || (rank < 13 && tops[card + 1])) return 1;
    }
    return 0;
}

/* -- the engine's interface ---------------------------------------------------------------- */

static uint64_t rehash(const void *state) {
    const State *s = state;
    uint64_t hash = z_misc(s);
    for (int f = 0; f < FOUNDATIONS; f++) hash ^= z_foundation(f, s->want[f]);
    for (int h = 0; h < HEAPS; h++) {
        for (int i = 0; i < s->length[h]; i++) hash ^= z_heap(h, i, s->heap[h][i]);
    }
    for (int i = 0; i < s->stock_length; i++) hash ^= ZOBRIST[Z_STOCK + i * 52 + s->stock[i]];
    return hash;
}

/* The rank foundation ``place`` takes next, from its cards (bottom to top), or -1 if they are
 * not a foundation of its row's suit built from its ace up or its king down. */
static int foundation_want(int place, const uint8_t *cards, int length) {
    int suit = place % ROWS, ace = place < ROWS;
    if (length > 13) return -1;
    for (int i = 0; i < length; i++) {
        if (cards[i] != CARD(suit, ace ? i + 1 : 13 - i)) return -1;
    }
    return ace ? length + 1 : 13 - length;
}

/* Whether heap ``h`` can never outgrow HEAP_CAP: while a deal is in progress it is dealt at most
 * a card in twelve of the stock, and one more; then cards go on it only one rank apart in the
 * suit of its top card, at most 26 of them and the run of its top cards of one suit one rank
 * apart counting among them. */
static int has_room(const State *s, int h) {
    int length = s->length[h], run = length > 0;
    while (run < length) {
        int card = s->heap[h][length - run], under = s->heap[h][length - run - 1];
        if (SUIT(card) != SUIT(under) || (card - under != 1 && under - card != 1)) break;
        run++;
    }
    if (s->turned != NO_CARD) return length + s->stock_length / HEAPS + 1 + 26 <= HEAP_CAP;
    return length - run + 26 <= HEAP_CAP;
}

static const char *load(void *state, const Layout *layout) {
    State *s = state;
    memset(s, 0, sizeof *s);
    if (layout->piles != PILES) return "four-corners has 22 piles";
    if (layout->fields != 2) return "four-corners has two fields: deal and next heap";
    for (int h = 0; h < HEAPS; h++) {
        if (layout->lengths[h] > HEAP_CAP) return "a heap holds more cards than the core keeps";
        s->length[h] = (uint8_t)layout->lengths[h];
        memcpy(s->heap[h], layout->cards[h], (size_t)layout->lengths[h]);
    }
    for (int f = 0; f < FOUNDATIONS; f++) {
        int want = foundation_want(f, layout->cards[HEAPS + f], layout->lengths[HEAPS + f]);
        if (want < 0) return "a foundation is not built from its ace up or its king down";
        s->want[f] = (uint8_t)want;
    }
    if (layout->lengths[STOCK] > CARDS) return "the stock holds more than 104 cards";
    s->stock_length = (uint8_t)layout->lengths[STOCK];
    memcpy(s->stock, layout->cards[STOCK], (size_t)layout->lengths[STOCK]);
    if (layout->lengths[TURNED] > 1) return "at most one card waits in turned";
    s->turned = layout->lengths[TURNED] ? layout->cards[TURNED][0] : NO_CARD;
    if (layout->field[0] < 1 || layout->field[0] > DEALS) return "the deal is 1..3";
    if (layout->field[1] < 0 || layout->field[1] >= HEAPS) return "the next heap is 0..11";
    s->deal = (uint8_t)layout->field[0];
    s->next_heap = (uint8_t)layout->field[1];
    for (int h = 0; h < HEAPS; h++) {
        if (!has_room(s, h)) return "a heap may grow beyond what the core keeps";
    }
    s->hash = rehash(s);
    return NULL;
}

static void export(const void *state, Layout *layout) {
    const State *s = state;
    layout->piles = PILES;
    for (int h = 0; h < HEAPS; h++) {
        layout->lengths[h] = s->length[h];
        memcpy(layout->cards[h], s->heap[h], s->length[h]);
    }
    for (int f = 0; f < FOUNDATIONS; f++) {
        int suit = f % ROWS, count = f < ROWS ? s->want[f] - 1 : 13 - s->want[f];
        for (int i = 0; i < count; i++) {
            layout->cards[HEAPS + f][i] = CARD(suit, f < ROWS ? i + 1 : 13 - i);
        }
        layout->lengths[HEAPS + f] = count;
    }
    layout->lengths[STOCK] = s->stock_length;
    memcpy(layout->cards[STOCK], s->stock, s->stock_length);
    layout->lengths[TURNED] = s->turned != NO_CARD;
    layout->cards[TURNED][0] = s->turned;
    layout->fields = 2;
    layout->field[0] = s->deal;
    layout->field[1] = s->next_heap;
}

static inline Move transfer(int source, int target, int card) {
    Move move = {(uint8_t)source, (uint8_t)target, (uint8_t)card, 1, 0, ACT_NONE, 0};
    return move;
}

/* While a card waits, only its foundations (FC-6, FC-8); after a deal, each heap's top card
 * home, the ace place before the king place (FC-9), then onto the heaps in deal order whose
 * top is one rank off in its suit (FC-10; no wrap: an ace and a king are not one rank apart),
 * heap by heap; then a redeal if one is left (FC-14, FC-15). */
static int moves(const void *state, Move *out) {
    const State *s = state;
    int count = 0;
    if (s->turned != NO_CARD) {
        int targets[2];
        int n = deal_targets(s, s->turned, s->next_heap, targets);
        for (int i = 0; i < n; i++) out[count++] = transfer(TURNED, HEAPS + targets[i], s->turned);
        return count;
    }
    uint16_t tops[54] = {0};     /* by card + 1: the heaps a card tops */
    for (int h = 0; h < HEAPS; h++) {
        if (s->length[h]) tops[TOP(s, h) + 1] |= (uint16_t)(1u << h);
    }
    for (int h = 0; h < HEAPS; h++) {
        if (!s->length[h]) continue;
        int card = TOP(s, h), rank = RANK_OF[card], suit = SUIT_OF[card];
        if (s->want[suit] == rank) out[count++] = transfer(h, HEAPS + suit, card);
        if (s->want[suit + ROWS] == rank) out[count++] = transfer(h, HEAPS + ROWS + suit, card);
        unsigned onto = (rank > 1 ? tops[card] : 0u) | (rank < 13 ? tops[card + 2] : 0u);
        while (onto) {
            int target = __builtin_ctz(onto);
            onto &= onto - 1;
            out[count++] = transfer(h, target, card);
        }
    }
    if (s->deal < DEALS) {
        Move move = {NO_PILE, NO_PILE, NO_CARD, 1, 0, ACT_REDEAL, 0};
        out[count++] = move;
    }
    return count;
}

/* Make ``move``, then the forced steps: the deal runs on until a card waits or the stock is
 * out, and a redeal that is all there is left to do is made (FC-14, RULINGS principle 6). */
static void make(void *state, const Move *move) {
    State *s = state;
    s->hash ^= z_misc(s);
    if (move->action == ACT_REDEAL) {
        redeal(s);
    } else if (move->source == TURNED) {
        s->turned = NO_CARD;
        foundation_push(s, move->target - HEAPS);
        deal_on(s);
    } else {
        int card = heap_pop(s, move->source);
        if (move->target >= HEAPS) {
            foundation_push(s, move->target - HEAPS);
        } else {
            heap_push(s, move->target, card);
        }
    }
    while (s->turned == NO_CARD && s->deal < DEALS && !won(s) && !has_transfer(s)) redeal(s);
    s->hash ^= z_misc(s);
}

/* The key: the deal (with a mark while a deal is in progress), the foundations, and the heaps,
 * each its length then its cards; while a deal is in progress also the waiting card, the next
 * heap and the stock. */
static int key(const void *state, uint8_t *out) {
    const State *s = state;
    int n = 0;
    int dealing = s->turned != NO_CARD;
    out[n++] = (uint8_t)(s->deal | dealing << 4);
    memcpy(out + n, s->want, FOUNDATIONS);
    n += FOUNDATIONS;
    if (dealing) {
        out[n++] = s->turned;
        out[n++] = s->next_heap;
        out[n++] = s->stock_length;
        memcpy(out + n, s->stock, s->stock_length);
        n += s->stock_length;
    }
    for (int h = 0; h < HEAPS; h++) {
        out[n++] = s->length[h];
        memcpy(out + n, s->heap[h], s->length[h]);
        n += s->length[h];
    }
    return n;
}

/* -- the last deal: a bound and a dominance (docs/solver.md, "Four Corners") -------------- */

/* Whether the last deal is complete: no redeal is left, no card waits, the stock is out. */
static inline int last_deal_complete(const State *s) {
    return s->deal == DEALS && s->turned == NO_CARD;
}

/* Ranks low..high as bits (bit r for rank r); none when low > high. */
static inline unsigned rank_bits(int low, int high) {
    return low > high ? 0u : ((2u << high) - 1u) & ~((1u << low) - 1u);
}

/* A proof of loss in the last deal, once complete: a card that can never leave its heap. A
 * card leaves its heap only from the top, home or onto another heap's top card one rank off in
 * its suit, and the cards beneath it cannot move before it leaves. So grow the set of cards
 * that may leave, from none: a card may, once every card above it may, if its ace foundation
 * could reach it (a card of each rank from the one wanted up to the card's own may leave), or
 * its king foundation likewise, or a card one rank off in its suit may leave or lies on top
 * of what is left of another heap. Every card that leaves in a real line is in the set (by the
 * time it leaves); so if the set misses a card, no line wins (FC-16). */
static int dead(const void *state) {
    const State *s = state;
    if (!last_deal_complete(s)) return 0;
    int rest[HEAPS], left = 0;           /* the cards of each heap not (yet) in the set */
    unsigned gone[ROWS] = {0};           /* by suit, the ranks of which a card is in the set */
    uint8_t shown[54] = {0};             /* by card + 1: the heaps it tops what is left of */
    for (int h = 0; h < HEAPS; h++) {
        left += rest[h] = s->length[h];
        if (rest[h]) shown[TOP(s, h) + 1]++;
    }
    for (int grew = 1; grew && left;) {
        grew = 0;
        for (int h = 0; h < HEAPS; h++) {
            while (rest[h]) {
                int card = s->heap[h][rest[h] - 1], rank = RANK_OF[card], suit = SUIT_OF[card];
                unsigned near = gone[suit];
                if (rank > 1 && shown[card]) near |= 1u << (rank - 1);
                if (rank < 13 && shown[card + 2]) near |= 1u << (rank + 1);
                if (!(near & (5u << (rank - 1)))) {
                    int up = s->want[suit], down = s->want[suit + ROWS];
                    unsigned missing = ~gone[suit];
                    if (!(rank >= up && !(rank_bits(up, rank - 1) & missing)) &&
                        !(rank <= down && !(rank_bits(rank + 1, down) & missing))) break;
                }
                shown[card + 1]--;
                if (--rest[h]) shown[s->heap[h][rest[h] - 1] + 1]++;
                left--;
                gone[suit] |= 1u << rank;
                grew = 1;
            }
        }
    }
    return left > 0;
}

/* In the last deal, once complete, a card goes home alone when its suit's foundations have
 * met: the king foundation wants a rank below the one the ace foundation wants. Then one card
 * of each rank of the suit is left, and each can only go to one foundation (docs/solver.md). */
static int safe(const void *state, const Move *move) {
    const State *s = state;
    if (!last_deal_complete(s) || move->target < HEAPS || move->source >= HEAPS) return 0;
    int suit = SUIT(move->card);
    return s->want[suit + ROWS] < s->want[suit];
}

/* -- move orders --------------------------------------------------------------------------- */

#define FAR 40

/* How many cards of its suit must go home before ``card`` can (FAR: no foundation wants it). */
static inline int need(const State *s, int card) {
    int rank = RANK_OF[card], suit = SUIT_OF[card], best = FAR;
    int up = rank - s->want[suit], down = s->want[suit + ROWS] - rank;
    if (up >= 0) best = up;
    if (down >= 0 && down < best) best = down;
    return best;
}

/* How soon a card of heap ``h`` below its top ``skip`` cards could go home: its depth (from
 * the top left) plus how many cards must go home before it. */
static int soonest(const State *s, int h, int skip) {
    int top = s->length[h] - 1 - skip, best = FAR;
    for (int i = top; i >= 0 && top - i < best; i--) {
        int value = top - i + need(s, s->heap[h][i]);
        if (value < best) best = value;
    }
    return best;
}

static void make(void *state, const Move *move);

/* How many cards would be home after ``move``, a redeal at once and its deal, each card that
 * fits both foundations of its suit put on the king one. */
static int home_after_redeal(const State *s, const Move *move) {
    State next = *s;
    make(&next, move);
    if (next.deal == s->deal && next.turned == NO_CARD) redeal(&next);
    while (next.turned != NO_CARD) {
        int targets[2];
        deal_targets(&next, next.turned, next.next_heap, targets);
        next.turned = NO_CARD;
        foundation_push(&next, targets[1]);
        deal_on(&next);
    }
    int home = 0;
    for (int f = 0; f < ROWS; f++) home += next.want[f] - 1 + 13 - next.want[f + ROWS];
    return home;
}

/* Move orders: moves home first, and the redeal last (but in variant 1); a card waiting for
 * its foundation tries the ace place first. Moves between heaps, by how soon a card of the
 * heap they uncover could go home (``soonest``), the sooner first:
 * - variant 0: that alone (the engine's order among equals);
 * - variant 1: engine/solver/search.py's ``_heap_order``: twice that, less how soon a card of
 *   the heap they cover could go home (up to 10), and the redeal before them;
 * - variant 2: before the last deal, those after which a redeal at once would bring the most
 *   cards home in its deal first (``home_after_redeal``); in the last deal as variant 1;
 * - variant 3 and above: as variant 0, equals put in an order drawn from the variant number.
 * Before the last deal the order decides which third deals the search reaches first, and
 * there the three differ most: see docs/solver.md for the deals each wins. */
static void order(const void *state, Move *list, int count, int variant) {
    const State *s = state;
    int uncover[HEAPS], bury[HEAPS];     /* ``soonest`` of each heap, less or with its top */
    for (int h = 0; h < HEAPS; h++) uncover[h] = bury[h] = -1;
    for (int i = 0; i < count; i++) {
        Move *move = &list[i];
        if (move->action == ACT_REDEAL) {
            move->order = variant == 1 ? 50 : 10000;
        } else if (move->source == TURNED) {
            move->order = move->target - HEAPS >= ROWS;
        } else if (move->target >= HEAPS) {
            move->order = 0;
        } else {
            int source = move->source, target = move->target, score;
            if (uncover[source] < 0) uncover[source] = soonest(s, source, 1);
            int soon = uncover[source];
            if (variant == 0) {
                score = soon;
            } else if (variant == 2 && s->deal < DEALS) {
                score = 64 * (CARDS - home_after_redeal(s, move)) + soon - 1000;
            } else if (variant <= 2) {
                if (bury[target] < 0) bury[target] = soonest(s, target, 0) + 1;
                score = 2 * soon - (bury[target] < 10 ? bury[target] : 10);
            } else {
                uint64_t draw = mix64(s->hash ^ (uint64_t)variant << 40 ^
                                      (uint64_t)(source * 32 + target));
                score = 16 * soon + (int)(draw >> 60);
            }
            move->order = (int16_t)(2000 + score);
        }
    }
}

const RuleSet FOUR_CORNERS = {
    .name = "four-corners",
    .state_size = sizeof(State),
    .load = load,
    .export = export,
    .moves = moves,
    .make = make,
    .won = won,
    .rehash = rehash,
    .key = key,
    .dead = dead,
    .order = order,
    .safe = safe,
};
