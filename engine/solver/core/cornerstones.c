/* Cornerstones and Cornerstones (Arnold) for the compiled search core: the rules of
 * engine/rulesets/cornerstones.py (docs/rules/cornerstones.md, CS-n, and
 * docs/rules/cornerstones-arnold.md, CA-n), which the engine stays the judge of. The two rule
 * sets share everything but the number of redeals (0 or 2), which the state carries.
 *
 * Piles are numbered as ``Cornerstones.pile_ids``: 0..11 the twelve piles in deal order
 * (right:1..6, left:1..6), 12..15 the ace places ace:1..4, 16..19 the king places king:1..4,
 * 20 the stock, 21 turned. Foundation ``f`` (0..7) is pile 12 + f and lies on line f % 4.
 *
 * The state is compact: the twelve piles and the stock packed bottom to top in one array of
 * 104 bytes (cards leave and join piles only at their tops, so a move shifts the few bytes
 * between two tops), and each foundation as its height. A foundation holds one suit in order,
 * from its ace up or its king down (CS-7), and a reversal (CS-17) moves its top card onto the
 * other foundation of the line, which keeps both runs whole; so the line's suit and the two
 * heights say every card on it.
 */
#include <string.h>

#include "core.h"

#define PILES 12
#define STOCK_SEGMENT 12
#define SEGMENTS 13
#define TOTAL 104
#define NO_SUIT 4
#define NO_LINE 4
#define PILE_ACE 12
#define PILE_STOCK 20
#define PILE_TURNED 21
#define FAR 40

typedef struct {
    uint64_t hash;
    uint8_t cards[TOTAL];     /* piles 0..11 then the stock, each bottom to top, packed */
    uint8_t length[SEGMENTS]; /* cards of piles 0..11 and of the stock (12) */
    uint8_t height[8];        /* cards on foundation f */
    uint8_t line_suit[4];     /* the suit each line was given (CS-5), or NO_SUIT */
    uint8_t line_of[4];       /* the line each suit was given, or NO_LINE (not in the key) */
    uint8_t turned;           /* the card waiting for the player's choice (CS-10), or NO_CARD */
    uint8_t next_pile;        /* the pile the next card turned is for (CS-4, CS-11) */
    uint8_t redeals_used;
    uint8_t redeals;          /* 0, or 2 for Arnold's version (CA-2): not in the key */
    uint8_t home;             /* cards on the foundations */
} State;

/* The foundation line (0..3) level with each pile, NO_LINE for the four cornerstones (CS-2). */
static const uint8_t PILE_LINE[PILES] = {NO_LINE, 0, 1, 2, 3, NO_LINE,
                                         NO_LINE, 0, 1, 2, 3, NO_LINE};

/* -- the hash ----------------------------------------------------------------------------- */

/* Zobrist keys: a pile's card by pile, depth and card (12 * 104 * 52 = 64,896 keys), then the
 * foundations' heights, the lines' suits, the turned card, the next pile and the redeals. The
 * stock (only there during a deal) takes keys of its own made by mix64. */
#define Z_HEIGHT 64896
#define Z_SUIT (Z_HEIGHT + 8 * 14)
#define Z_TURNED (Z_SUIT + 4 * 5)
#define Z_NEXT (Z_TURNED + 52)
#define Z_REDEALS (Z_NEXT + PILES)

static inline uint64_t z_pile(int pile, int depth, int card) {
    return ZOBRIST[(pile * TOTAL + depth) * 52 + card];
}

static inline uint64_t z_stock(int depth, int card) {
    return mix64(0xC0A1C0A1ULL + (uint64_t)(depth * 52 + card));
}

static uint64_t cs_rehash(const void *state) {
    const State *s = state;
    uint64_t hash = 0;
    int at = 0;
    for (int pile = 0; pile < PILES; pile++) {
        for (int depth = 0; depth < s->length[pile]; depth++) {
            hash ^= z_pile(pile, depth, s->cards[at++]);
        }
    }
    for (int depth = 0; depth < s->length[STOCK_SEGMENT]; depth++) {
        hash ^= z_stock(depth, s->cards[at++]);
    }
    for (int f = 0; f < 8; f++) hash ^= ZOBRIST[Z_HEIGHT + f * 14 + s->height[f]];
    for (int line = 0; line < 4; line++) hash ^= ZOBRIST[Z_SUIT + line * 5 + s->line_suit[line]];
    if (s->turned != NO_CARD) hash ^= ZOBRIST[Z_TURNED + s->turned];
    hash ^= ZOBRIST[Z_NEXT + s->next_pile];
    hash ^= ZOBRIST[Z_REDEALS + s->redeals_used];
    return hash;
}

/* -- small helpers ------------------------------------------------------------------------ */

static inline int total_cards(const State *s) {
    int total = 0;
    for (int i = 0; i < SEGMENTS; i++) total += s->length[i];
    return total;
}

/* Where each pile's cards begin in ``cards``; ``start[12]`` the stock's, ``start[13]`` the end. */
static inline void starts(const State *s, int *start) {
    start[0] = 0;
    for (int i = 0; i < SEGMENTS; i++) start[i + 1] = start[i] + s->length[i];
}

/* The rank foundation ``f`` takes next: its ace or king while empty, one above (an ace place)
 * or below (a king place) its top card; 14 or 0 once complete, which no card has. */
static inline int next_rank(const State *s, int f) {
    return f < 4 ? s->height[f] + 1 : 13 - s->height[f];
}

static inline void set_height(State *s, int f, int height) {
    s->hash ^= ZOBRIST[Z_HEIGHT + f * 14 + s->height[f]] ^ ZOBRIST[Z_HEIGHT + f * 14 + height];
    s->height[f] = (uint8_t)height;
}

/* Put ``card`` on foundation ``f`` (its suit fits); give the line its suit if it had none. */
static void put_home(State *s, int f, int card) {
    set_height(s, f, s->height[f] + 1);
    s->home++;
    int line = f % 4;
    if (s->line_suit[line] == NO_SUIT) {
        s->hash ^= ZOBRIST[Z_SUIT + line * 5 + NO_SUIT] ^ ZOBRIST[Z_SUIT + line * 5 + SUIT(card)];
        s->line_suit[line] = (uint8_t)SUIT(card);
        s->line_of[SUIT(card)] = (uint8_t)line;
    }
}

static inline void set_next_pile(State *s, int pile) {
    s->hash ^= ZOBRIST[Z_NEXT + s->next_pile] ^ ZOBRIST[Z_NEXT + pile];
    s->next_pile = (uint8_t)pile;
}

static inline void set_turned(State *s, int card) {
    if (s->turned != NO_CARD) s->hash ^= ZOBRIST[Z_TURNED + s->turned];
    if (card != NO_CARD) s->hash ^= ZOBRIST[Z_TURNED + card];
    s->turned = (uint8_t)card;
}

/* Foundations a card turned for ``pile`` goes to during a deal, in the engine's order
 * (``_deal_targets``): a first ace or king to the ace or king place of any free line (CS-5),
 * the partner of a started line to its empty place, whatever the pile (CS-6); any other card
 * to a place of its line it fits, from a cornerstone or a side pile of that line only (CS-8,
 * CS-9). Their number. */
static int deal_targets(const State *s, int card, int pile, uint8_t *out) {
    int suit = SUIT(card), rank = RANK(card), count = 0;
    int line = s->line_of[suit];
    if (line == NO_LINE) {
        if (rank == 1 || rank == 13) {
            for (int free = 0; free < 4; free++) {
                if (s->line_suit[free] == NO_SUIT) out[count++] = (uint8_t)(free + (rank == 13) * 4);
            }
        }
        return count;
    }
    if (rank == 1 && s->height[line] == 0) {
        out[0] = (uint8_t)line;
        return 1;
    }
    if (rank == 13 && s->height[line + 4] == 0) {
        out[0] = (uint8_t)(line + 4);
        return 1;
    }
    if (PILE_LINE[pile] != NO_LINE && PILE_LINE[pile] != line) return 0;
    if (rank == s->height[line] + 1) out[count++] = (uint8_t)line;
    if (rank == 13 - s->height[line + 4]) out[count++] = (uint8_t)(line + 4);
    return count;
}

/* Turn cards from the stock onto the piles in rotation (CS-4), playing each card that fits a
 * foundation it may go to (CS-8, CS-9; it does not use up its pile, CS-11), until a card fits
 * two (it waits in turned, CS-10) or the stock is out (CS-20). */
static void deal(State *s) {
    uint8_t targets[8];
    int total = total_cards(s);
    while (s->length[STOCK_SEGMENT] > 0) {
        int card = s->cards[total - 1];
        s->hash ^= z_stock(s->length[STOCK_SEGMENT] - 1, card);
        s->length[STOCK_SEGMENT]--;
        total--;
        int pile = s->next_pile;
        int count = deal_targets(s, card, pile, targets);
        if (count == 0) {
            int at = 0;
            for (int i = 0; i <= pile; i++) at += s->length[i];
            memmove(s->cards + at + 1, s->cards + at, (size_t)(total - at));
            s->cards[at] = (uint8_t)card;
            s->hash ^= z_pile(pile, s->length[pile], card);
            s->length[pile]++;
            total++;
            set_next_pile(s, (pile + 1) % PILES);
        } else if (count == 1) {
            put_home(s, targets[0], card);
        } else {
            set_turned(s, card);
            return;
        }
    }
}

/* Gather the piles in deal order, the lowest card of each first, and deal again into all
 * twelve piles (CA-3, CA-4). A redeal is made only once a deal is complete: the stock is out. */
static void redeal(State *s) {
    int total = total_cards(s);
    for (int i = 0, j = total - 1; i < j; i++, j--) {
        uint8_t card = s->cards[i];
        s->cards[i] = s->cards[j];
        s->cards[j] = card;
    }
    memset(s->length, 0, PILES);
    s->length[STOCK_SEGMENT] = (uint8_t)total;
    s->hash ^= ZOBRIST[Z_REDEALS + s->redeals_used] ^ ZOBRIST[Z_REDEALS + s->redeals_used + 1];
    s->redeals_used++;
    set_next_pile(s, 0);
    s->hash = cs_rehash(s);
    deal(s);
}

/* -- moves -------------------------------------------------------------------------------- */

static inline Move transfer(int source, int target, int card) {
    Move move = {(uint8_t)source, (uint8_t)target, (uint8_t)card, 1, 0, ACT_NONE, 0};
    return move;
}

/* Each pile's top card (NO_CARD when empty), and for each rank 1..13 the piles topped by it. */
static inline void tops(const State *s, uint8_t *top, uint16_t *by_rank) {
    int at = 0;
    memset(by_rank, 0, 15 * sizeof *by_rank);
    for (int pile = 0; pile < PILES; pile++) {
        at += s->length[pile];
        if (s->length[pile]) {
            top[pile] = s->cards[at - 1];
            by_rank[RANK(top[pile])] |= (uint16_t)(1u << pile);
        } else {
            top[pile] = NO_CARD;
        }
    }
}

static inline int up(int rank) { return rank % 13 + 1; }
static inline int down(int rank) { return (rank + 11) % 13 + 1; }

/* Whether a complete deal offers any move but a redeal (the engine redeals by itself when it
 * does not, CA-2). */
static int has_play(const State *s) {
    uint8_t top[PILES];
    uint16_t by_rank[15];
    tops(s, top, by_rank);
    for (int pile = 0; pile < PILES; pile++) {
        if (top[pile] == NO_CARD) continue;
        int rank = RANK(top[pile]);
        if (by_rank[up(rank)] | by_rank[down(rank)]) return 1;
        int line = s->line_of[SUIT(top[pile])];
        if (line != NO_LINE && (next_rank(s, line) == rank || next_rank(s, line + 4) == rank)) {
            return 1;
        }
    }
    for (int line = 0; line < 4; line++) {
        if (s->height[line] + s->height[line + 4] == 13) return 1;
    }
    return 0;
}

/* The legal moves in the engine's order (``_moves``): while a card waits, only its places
 * (CS-10, CS-12); after a deal, top cards onto piles a rank above or below, round the corner
 * (CS-14, CS-15; an emptied pile stays empty, CS-16), top cards home (CS-13), reversals
 * (CS-17, CS-18: never the starting card) and the redeal (CA-2). */
static int cs_moves(const void *state, Move *out) {
    const State *s = state;
    int count = 0;
    if (s->turned != NO_CARD) {
        uint8_t targets[8];
        int places = deal_targets(s, s->turned, s->next_pile, targets);
        for (int i = 0; i < places; i++) {
            out[count++] = transfer(PILE_TURNED, PILE_ACE + targets[i], s->turned);
        }
        return count;
    }
    if (s->home == TOTAL) return 0;
    uint8_t top[PILES];
    uint16_t by_rank[15];
    tops(s, top, by_rank);
    for (int pile = 0; pile < PILES; pile++) {
        if (top[pile] == NO_CARD) continue;
        int rank = RANK(top[pile]);
        for (int side = 0; side < 2; side++) {
            for (unsigned other = by_rank[side ? down(rank) : up(rank)]; other;
                 other &= other - 1) {
                out[count++] = transfer(pile, __builtin_ctz(other), top[pile]);
            }
        }
    }
    for (int f = 0; f < 8; f++) {
        int suit = s->line_suit[f % 4];
        if (suit == NO_SUIT) continue;
        for (unsigned pile = by_rank[next_rank(s, f)]; pile; pile &= pile - 1) {
            int card = top[__builtin_ctz(pile)];
            if (SUIT(card) == suit) out[count++] = transfer(__builtin_ctz(pile), PILE_ACE + f, card);
        }
    }
    for (int line = 0; line < 4; line++) {
        int ace = s->height[line], king = s->height[line + 4], suit = s->line_suit[line];
        if (suit == NO_SUIT || ace + king != 13) continue;
        if (ace > 1) out[count++] = transfer(PILE_ACE + line, PILE_ACE + 4 + line, CARD(suit, ace));
        if (king > 1) {
            out[count++] = transfer(PILE_ACE + 4 + line, PILE_ACE + line, CARD(suit, 14 - king));
        }
    }
    if (s->redeals_used < s->redeals) {
        Move move = {NO_PILE, NO_PILE, NO_CARD, 1, 0, ACT_REDEAL, 0};
        out[count++] = move;
    }
    return count;
}

/* Move the top card of pile ``source`` onto pile ``target`` (both 0..11). */
static void shift_top(State *s, int source, int target) {
    int start[SEGMENTS + 1];
    starts(s, start);
    int from = start[source + 1] - 1, to = start[target + 1];
    uint8_t card = s->cards[from];
    if (source < target) {
        memmove(s->cards + from, s->cards + from + 1, (size_t)(to - from - 1));
        s->cards[to - 1] = card;
    } else {
        memmove(s->cards + to + 1, s->cards + to, (size_t)(from - to));
        s->cards[to] = card;
    }
    s->hash ^= z_pile(source, s->length[source] - 1, card) ^ z_pile(target, s->length[target], card);
    s->length[source]--;
    s->length[target]++;
}

/* Take the top card off pile ``pile`` (0..11). */
static void take_top(State *s, int pile) {
    int start[SEGMENTS + 1];
    starts(s, start);
    int from = start[pile + 1] - 1;
    uint8_t card = s->cards[from];
    memmove(s->cards + from, s->cards + from + 1, (size_t)(start[SEGMENTS] - from - 1));
    s->hash ^= z_pile(pile, s->length[pile] - 1, card);
    s->length[pile]--;
}

static void cs_make(void *state, const Move *move) {
    State *s = state;
    if (move->action == ACT_REDEAL) {
        redeal(s);
    } else if (move->source == PILE_TURNED) {
        set_turned(s, NO_CARD);
        put_home(s, move->target - PILE_ACE, move->card);
        deal(s);
    } else if (move->source >= PILE_ACE) {
        int from = move->source - PILE_ACE, to = move->target - PILE_ACE;
        set_height(s, from, s->height[from] - 1);
        set_height(s, to, s->height[to] + 1);
    } else if (move->target >= PILE_ACE) {
        take_top(s, move->source);
        put_home(s, move->target - PILE_ACE, move->card);
    } else {
        shift_top(s, move->source, move->target);
    }
    /* A redeal that is all there is left to do is made at once (CA-2, rules version 2). */
    while (s->home < TOTAL && s->turned == NO_CARD && s->redeals_used < s->redeals &&
           !has_play(s)) {
        redeal(s);
    }
}

static int cs_won(const void *state) {
    return ((const State *)state)->home == TOTAL;
}

/* The key: the exact position (the engine's ``state_key``; no symmetry of these rules is used,
 * docs/solver.md): the foundations' heights a nibble each, the lines' suits, the next pile and
 * the redeals used, the turned card, then the piles and the stock, each followed by NO_CARD
 * (at most 8 + 104 + 13 = 125 bytes, 100 or so after a deal). */
static int cs_key(const void *state, uint8_t *out) {
    const State *s = state;
    int at = 0, card = 0;
    for (int line = 0; line < 4; line++) {
        out[at++] = (uint8_t)(s->height[line] << 4 | s->height[line + 4]);
    }
    unsigned suits = 0;
    for (int line = 0; line < 4; line++) suits |= (unsigned)s->line_suit[line] << (3 * line);
    out[at++] = (uint8_t)suits;
    out[at++] = (uint8_t)(suits >> 8);
    out[at++] = (uint8_t)(s->next_pile * 3 + s->redeals_used);
    out[at++] = s->turned;
    for (int segment = 0; segment < SEGMENTS; segment++) {
        memcpy(out + at, s->cards + card, s->length[segment]);
        at += s->length[segment];
        card += s->length[segment];
        out[at++] = NO_CARD;
    }
    return at;
}

/* How a suit's foundations take cards in the relaxed race of ``cs_dead`` (docs/solver.md,
 * "Cornerstones"). A card of rank q goes home onto the ace place showing q-1, which holds one
 * card of each rank below q, or onto the king place showing q+1, which holds one of each rank
 * above (CS-7; a reversal, CS-17, moves a card between the two places and keeps both runs
 * whole). So while a rank of the suit has no card home (*inward*), a card of rank q goes home
 * only once every rank below, or every rank above, has a card home. Once every rank has one,
 * the second cards go home from where the two places crossed outward: the ranks with both
 * cards home are a run, and only the rank next to it either side goes home (*outward*), or,
 * before any rank has both (*free*), any rank. The race uses these rules as they stand in the
 * position searched, as counts that only grow: inward stays inward (it takes every rank once
 * every rank has a card home), so nothing the race does ever takes a possibility away. */
enum { SUIT_INWARD, SUIT_FREE, SUIT_OUTWARD };

typedef struct {
    uint8_t count[15];  /* cards of each rank 1..13 home (0..2) */
    uint8_t mode;
    int8_t low, high;   /* inward: every rank 1..low and high..13 has a card home;
                         * outward: low..high the ranks with both cards home */
} Suit;

#define RANKS 0x3FFEu   /* bits 1..13 */

static void suit_update(Suit *suit) {
    if (suit->mode == SUIT_INWARD) {
        while (suit->low < 13 && suit->count[suit->low + 1]) suit->low++;
        while (suit->high > 1 && suit->count[suit->high - 1]) suit->high--;
    } else if (suit->mode == SUIT_OUTWARD) {
        while (suit->low > 1 && suit->count[suit->low - 1] == 2) suit->low--;
        while (suit->high < 13 && suit->count[suit->high + 1] == 2) suit->high++;
    }
}

/* The ranks the suit takes now, as bits 1..13. */
static unsigned suit_takes(const Suit *suit) {
    if (suit->mode == SUIT_FREE) return RANKS;
    if (suit->mode == SUIT_INWARD) {
        return (((2u << (suit->low + 1)) - 1) | ~((1u << (suit->high - 1)) - 1)) & RANKS;
    }
    return ((1u << (suit->low - 1)) | (1u << (suit->high + 1))) & RANKS;
}

/* The relaxed race for the last deal (no redeal left: the piles are never gathered again):
 * cards leave the piles as they lie in ``state`` from the top down, each either home, when its
 * suit takes its rank (``Suit``), or away onto another pile, when a card one rank above or
 * below it (round the corner, CS-14, CS-15) has been uncovered at some time: a top of the
 * piles as they lie, a card of the stock or turned, or one uncovered or moved away in the race.
 * A card moved away, of the stock or turned is free: it goes home whenever its suit takes its
 * rank. Every winning line is a course of this race (a card it moves onto another pile goes
 * onto an uncovered card of a neighbouring rank; a card it brings home is free or on top),
 * and in the race nothing done ever takes a possibility away, so running it until nothing
 * more happens finds out whether it can bring every card home. If it cannot, no line wins. */
static int cs_dead(const void *state) {
    const State *s = state;
    if (s->redeals_used < s->redeals) return 0;
    Suit suits[4];
    memset(suits, 0, sizeof suits);
    for (int line = 0; line < 4; line++) {
        int suit = s->line_suit[line];
        if (suit == NO_SUIT) continue;
        for (int rank = 1; rank <= s->height[line]; rank++) suits[suit].count[rank]++;
        for (int rank = 14 - s->height[line + 4]; rank <= 13; rank++) suits[suit].count[rank]++;
    }
    for (int i = 0; i < 4; i++) {
        Suit *suit = &suits[i];
        int missing = 0, low = 14, high = 0;
        for (int rank = 1; rank <= 13; rank++) {
            missing |= suit->count[rank] == 0;
            if (suit->count[rank] == 2) {
                if (rank < low) low = rank;
                high = rank;
            }
        }
        if (missing) {
            suit->mode = SUIT_INWARD;
            suit->low = 0;
            suit->high = 14;
        } else if (high == 0) {
            suit->mode = SUIT_FREE;
        } else {
            suit->mode = SUIT_OUTWARD;
            suit->low = (int8_t)low;
            suit->high = (int8_t)high;
        }
        suit_update(suit);
    }
    /* The free cards not yet home, by suit and rank (and as bits of ranks); ranks uncovered. */
    uint8_t pool[4][15];
    unsigned pooled[4] = {0, 0, 0, 0}, seen = 0;
    memset(pool, 0, sizeof pool);
    int start[SEGMENTS + 1];
    starts(s, start);
    int left = TOTAL - s->home;
    for (int i = start[STOCK_SEGMENT]; i <= start[SEGMENTS]; i++) {
        int card = i < start[SEGMENTS] ? s->cards[i] : s->turned;
        if (card == NO_CARD) continue;
        pool[SUIT(card)][RANK(card)]++;
        pooled[SUIT(card)] |= 1u << RANK(card);
        seen |= 1u << RANK(card);
    }
    int top[PILES];
    for (int pile = 0; pile < PILES; pile++) {
        top[pile] = start[pile + 1] - 1;
        if (top[pile] >= start[pile]) seen |= 1u << RANK(s->cards[top[pile]]);
    }
    /* When a rank next to every rank on the piles is uncovered already, every card can move
     * away and then go home in its turn: the race brings every card home. */
    unsigned ranks = 0, near = (seen << 1 | seen >> 1 | seen >> 13 << 1 | (seen >> 1 & 1) << 13);
    for (int i = 0; i < start[STOCK_SEGMENT]; i++) ranks |= 1u << RANK(s->cards[i]);
    if ((ranks & ~near) == 0) return 0;
    for (int changed = 1; changed && left;) {
        changed = 0;
        for (int i = 0; i < 4; i++) {
            for (unsigned ready; (ready = pooled[i] & suit_takes(&suits[i]));) {
                int rank = __builtin_ctz(ready);
                if (--pool[i][rank] == 0) pooled[i] &= ~(1u << rank);
                suits[i].count[rank]++;
                suit_update(&suits[i]);
                left--;
            }
        }
        for (int pile = 0; pile < PILES; pile++) {
            while (top[pile] >= start[pile]) {
                int card = s->cards[top[pile]], rank = RANK(card);
                Suit *suit = &suits[SUIT(card)];
                if (suit_takes(suit) >> rank & 1) {
                    suit->count[rank]++;
                    suit_update(suit);
                    left--;
                } else if (seen >> up(rank) & 1 || seen >> down(rank) & 1) {
                    pool[SUIT(card)][rank]++;
                    pooled[SUIT(card)] |= 1u << rank;
                } else {
                    break;
                }
                changed = 1;
                if (--top[pile] >= start[pile]) seen |= 1u << RANK(s->cards[top[pile]]);
            }
        }
    }
    return left > 0;
}

/* -- a safe move ------------------------------------------------------------------------- */

/* A move home the search may play alone (docs/solver.md, "Cornerstones"): in the last deal
 * (no redeal left) once it is complete, the top card ``c`` of a pile goes home when
 * - every card of rank r-1 and r+1 (round the corner) not home lies beneath ``c`` in its pile:
 *   then no card can ever be put on ``c`` and ``c`` can go nowhere but home (it is pinned);
 * - the other card equal to ``c`` is home, or beneath ``c``: so no card takes ``c``'s place
 *   on the foundations before ``c`` goes there;
 * - the two foundations of its suit do not meet (CS-17): no reversal can be made before.
 * Any winning line then leaves ``c`` where it is until it brings it home, and plays the same
 * with ``c`` home from the start (with one reversal added where it put ``c`` on the other
 * foundation of the suit). */
static int cs_safe(const void *state, const Move *move) {
    const State *s = state;
    if (move->action != ACT_NONE || move->target < PILE_ACE || move->source >= PILE_ACE ||
        s->redeals_used < s->redeals || s->turned != NO_CARD || s->length[STOCK_SEGMENT]) {
        return 0;
    }
    int card = move->card, rank = RANK(card), line = s->line_of[SUIT(card)];
    if (s->height[line] + s->height[line + 4] == 13) return 0;
    int high = up(rank), low = down(rank), total = total_cards(s);
    /* Cards of rank r-1 and r+1, and cards equal to ``c``, off the foundations: all of them in
     * ``c``'s pile beneath it? (``c`` itself is counted out: it is on top.) */
    int neighbours = 0, twins = 0;
    for (int i = 0; i < total; i++) {
        int other = s->cards[i], other_rank = RANK(other);
        neighbours += other_rank == high || other_rank == low;
        twins += other == card;
    }
    int end = 0;
    for (int pile = 0; pile <= move->source; pile++) end += s->length[pile];
    for (int i = end - s->length[move->source]; i < end - 1; i++) {
        int other = s->cards[i], other_rank = RANK(other);
        neighbours -= other_rank == high || other_rank == low;
        twins -= other == card;
    }
    return neighbours == 0 && twins == 1;
}

/* -- a position in and out ---------------------------------------------------------------- */

/* Fields (engine/solver/codecs.py): next_pile (0..11), redeals_used, the four lines' suits
 * (0..3, or -1 for none). */
static const char *load(State *s, const Layout *layout, int redeals) {
    memset(s, 0, sizeof *s);
    s->redeals = (uint8_t)redeals;
    if (layout->piles != 22 || layout->fields != 6) return "a Cornerstones position has 22 piles and 6 fields";
    if (layout->field[0] < 0 || layout->field[0] >= PILES) return "next_pile is 0..11";
    if (layout->field[1] < 0 || layout->field[1] > redeals) return "too many redeals used";
    s->next_pile = (uint8_t)layout->field[0];
    s->redeals_used = (uint8_t)layout->field[1];
    memset(s->line_of, NO_LINE, 4);
    for (int line = 0; line < 4; line++) {
        long suit = layout->field[2 + line];
        if (suit < -1 || suit > 3) return "a line's suit is 0..3 or -1";
        s->line_suit[line] = suit < 0 ? NO_SUIT : (uint8_t)suit;
        if (suit >= 0) {
            if (s->line_of[suit] != NO_LINE) return "a suit is on two lines";
            s->line_of[suit] = (uint8_t)line;
        }
    }
    int total = 0;
    for (int pile = 0; pile <= PILE_STOCK; pile++) {
        if (pile >= PILE_ACE && pile < PILE_STOCK) continue;
        int length = layout->lengths[pile];
        if (total + length > TOTAL) return "more than 104 cards";
        memcpy(s->cards + total, layout->cards[pile], (size_t)length);
        s->length[pile < PILES ? pile : STOCK_SEGMENT] = (uint8_t)length;
        total += length;
    }
    for (int f = 0; f < 8; f++) {
        int length = layout->lengths[PILE_ACE + f], suit = s->line_suit[f % 4];
        if (length > 13) return "a foundation holds at most 13 cards";
        for (int i = 0; i < length; i++) {
            int card = layout->cards[PILE_ACE + f][i];
            if (suit == NO_SUIT || card != CARD(suit, f < 4 ? i + 1 : 13 - i)) {
                return "a foundation holds its line's suit in order from its ace or king";
            }
        }
        s->height[f] = (uint8_t)length;
        s->home = (uint8_t)(s->home + length);
    }
    if (layout->lengths[PILE_TURNED] > 1) return "at most one card waits in turned";
    s->turned = layout->lengths[PILE_TURNED] ? layout->cards[PILE_TURNED][0] : NO_CARD;
    if (total + s->home + (s->turned != NO_CARD) != TOTAL) return "a position holds 104 cards";
    s->hash = cs_rehash(s);
    return NULL;
}

static const char *cs_load(void *state, const Layout *layout) { return load(state, layout, 0); }

static const char *ca_load(void *state, const Layout *layout) { return load(state, layout, 2); }

static void cs_export(const void *state, Layout *layout) {
    const State *s = state;
    int at = 0;
    layout->piles = 22;
    for (int pile = 0; pile <= PILE_TURNED; pile++) layout->lengths[pile] = 0;
    for (int pile = 0; pile < PILES; pile++) {
        memcpy(layout->cards[pile], s->cards + at, s->length[pile]);
        layout->lengths[pile] = s->length[pile];
        at += s->length[pile];
    }
    memcpy(layout->cards[PILE_STOCK], s->cards + at, s->length[STOCK_SEGMENT]);
    layout->lengths[PILE_STOCK] = s->length[STOCK_SEGMENT];
    for (int f = 0; f < 8; f++) {
        for (int i = 0; i < s->height[f]; i++) {
            layout->cards[PILE_ACE + f][i] = CARD(s->line_suit[f % 4], f < 4 ? i + 1 : 13 - i);
        }
        layout->lengths[PILE_ACE + f] = s->height[f];
    }
    if (s->turned != NO_CARD) {
        layout->cards[PILE_TURNED][0] = s->turned;
        layout->lengths[PILE_TURNED] = 1;
    }
    layout->fields = 6;
    layout->field[0] = s->next_pile;
    layout->field[1] = s->redeals_used;
    for (int line = 0; line < 4; line++) {
        layout->field[2 + line] = s->line_suit[line] == NO_SUIT ? -1 : s->line_suit[line];
    }
}

/* -- move order --------------------------------------------------------------------------- */

/* How many cards of its suit must go home before each card can (engine/solver/search.py,
 * ``_need``): the fewer, the sooner it is wanted; FAR when no foundation of its suit wants it. */
static void needs(const State *s, uint8_t *need) {
    for (int card = 0; card < 52; card++) {
        int suit = SUIT(card), rank = RANK(card), line = s->line_of[suit];
        if (line == NO_LINE) {
            need[card] = (uint8_t)(rank - 1 < 13 - rank ? rank - 1 : 13 - rank);
            continue;
        }
        int best = FAR;
        int gap = rank - next_rank(s, line);
        if (gap >= 0 && gap < best) best = gap;
        gap = next_rank(s, line + 4) - rank;
        if (gap >= 0 && gap < best) best = gap;
        need[card] = (uint8_t)best;
    }
}

/* A number from the position, the variant and a move's place in the list, for the orders that
 * break ties at random (the same on every machine). */
static inline int noise(const State *s, int variant, int index, int range) {
    return (int)(mix64(s->hash ^ (uint64_t)variant * 0x9E3779B97F4A7C15ULL ^ (uint64_t)index) %
                 (uint64_t)range);
}

/* The move orders (docs/solver.md, "Cornerstones"): moves home first, in the engine's order,
 * the redeal last; between them moves between piles by how soon they uncover a card wanted
 * home and how little they bury (variant 1: engine/solver/search.py's ``_heap_order``, move for
 * move), variant 0 also keeping piles from being emptied (a pile emptied stays empty, CS-16)
 * and from growing tall, variants 2 and up variant 0's with ties broken and near scores
 * swapped at random, the foundation chosen for a turned card too. */
static void cs_order(const void *state, Move *moves, int count, int variant) {
    const State *s = state;
    if (s->turned != NO_CARD) {
        for (int i = 0; i < count; i++) {
            moves[i].order = (int16_t)(variant >= 2 ? noise(s, variant, i, 64) : 0);
        }
        return;
    }
    uint8_t need[52];
    needs(s, need);
    /* For each pile, how soon a card of it is wanted (its depth plus its need): ``bare`` with
     * the top card taken off, ``whole`` as it is. */
    int bare[PILES], whole[PILES], end = 0;
    for (int pile = 0; pile < PILES; pile++) {
        int length = s->length[pile];
        end += length;
        /* From the top down, until the depth alone is more than the best found. */
        int best_bare = FAR, best_whole = FAR;
        for (int depth = 0; depth < length && (depth < best_whole || depth <= best_bare);
             depth++) {
            int value = depth + need[s->cards[end - 1 - depth]];
            if (value < best_whole) best_whole = value;
            if (depth > 0 && value - 1 < best_bare) best_bare = value - 1;
        }
        bare[pile] = best_bare;
        whole[pile] = best_whole;
    }
    for (int i = 0; i < count; i++) {
        Move *move = &moves[i];
        if (move->action == ACT_REDEAL) {
            move->order = 1000;
        } else if (move->target >= PILE_ACE) {
            move->order = -1000;
        } else {
            int target = whole[move->target] + 1;
            int score = 2 * bare[move->source] - (target < 10 ? target : 10);
            if (variant != 1) {
                score += s->length[move->target] + (s->length[move->source] == 1 ? 30 : 0);
                if (variant >= 2) score = score * 4 + noise(s, variant, i, 16);
            }
            move->order = (int16_t)score;
        }
    }
}

const RuleSet CORNERSTONES = {
    .name = "cornerstones",
    .state_size = sizeof(State),
    .load = cs_load,
    .export = cs_export,
    .moves = cs_moves,
    .make = cs_make,
    .won = cs_won,
    .rehash = cs_rehash,
    .key = cs_key,
    .dead = cs_dead,
    .order = cs_order,
    .safe = cs_safe,
};

const RuleSet CORNERSTONES_ARNOLD = {
    .name = "cornerstones-arnold",
    .state_size = sizeof(State),
    .load = ca_load,
    .export = cs_export,
    .moves = cs_moves,
    .make = cs_make,
    .won = cs_won,
    .rehash = cs_rehash,
    .key = cs_key,
    .dead = cs_dead,
    .order = cs_order,
    .safe = cs_safe,
};
