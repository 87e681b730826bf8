/* Puss in the Corner for the compiled core (core.h): the rules as
 * engine/rulesets/puss_in_the_corner.py plays them (rule ids PC-n of
 * docs/rules/puss-in-the-corner.md), for search only. docs/solver.md, "The compiled core",
 * "Puss in the Corner", argues the key, the bound and the safe moves.
 *
 * Piles, in the engine's ``pile_ids`` order: foundation:1..4 (0..3: the aces of spades,
 * hearts, diamonds, clubs), corner:1..4 (4..7), stock (8), turned (9). State fields, in the
 * order of the codec (engine/solver/codecs.py): the pass (1 or 2), the corners open to a
 * transfer (a mask, bit i for corner:i+1) and the seven whose transfers were last opened (a
 * card code, or -1).
 */
#include <string.h>

#include "core.h"

#define FOUNDATIONS 4
#define CORNERS 4
#define STOCK_PILE 8
#define TURNED_PILE 9
#define PILES 10
#define CARDS_OUT 48         /* every card but the four aces */
#define PASSES 2
#define SEVEN 7
#define ALL_FREE 0xF

typedef struct {
    uint64_t hash;
    uint64_t corner_sum[CORNERS];    /* each corner's cards hashed by place, added up */
    uint8_t height[FOUNDATIONS];     /* cards on each foundation, its ace included: 1..13 */
    uint8_t foundation[FOUNDATIONS][13];
    uint8_t length[CORNERS];
    uint8_t corner[CORNERS][CARDS_OUT];  /* bottom to top */
    uint8_t stock_length;
    uint8_t stock[CARDS_OUT];        /* bottom to top: the top, turned next, is last (PC-3) */
    uint8_t turned;                  /* NO_CARD when none waits */
    uint8_t pass;                    /* 1 or 2 (PC-13, PC-15) */
    uint8_t free;                    /* corners a transfer may still touch (PC-8, PC-9) */
    uint8_t seven;                   /* the seven whose transfers were opened last, or NO_CARD */
} Puss;

/* -- the hash ----------------------------------------------------------------------------- *
 * A sum (mod 2^64) of parts, each a function of what the key keeps: a foundation's height by
 * its colour (the two of a colour add up, so either order gives one hash); the stock's cards
 * by place; the turned card; the pass; and each corner as mix64 of its cards' sum plus the
 * corner's number (first pass only) and whether it is open to a transfer. In the second pass
 * the corners' parts add up without their numbers: any renaming of the corners (the free
 * marks carried along) gives one hash, as it gives one key. */

enum {
    Z_CORNER = 0,                          /* + place * 52 + card */
    Z_STOCK = Z_CORNER + CARDS_OUT * 52,   /* + place * 52 + card */
    Z_HEIGHT = Z_STOCK + CARDS_OUT * 52,   /* + red * 16 + height */
    Z_TURNED = Z_HEIGHT + 32,              /* + card, or + 52 for none */
    Z_PASS = Z_TURNED + 53,
    Z_NUMBER = Z_PASS + 3,                 /* + corner */
    Z_FREE = Z_NUMBER + CORNERS,
};

static int red_foundation(int foundation) { return foundation == 1 || foundation == 2; }

static uint64_t corner_part(const Puss *s, int corner) {
    uint64_t salt = s->corner_sum[corner];
    if (s->pass == 1) salt += ZOBRIST[Z_NUMBER + corner];
    if (s->free >> corner & 1) salt += ZOBRIST[Z_FREE];
    return mix64(salt);
}

static uint64_t height_part(int foundation, int height) {
    return ZOBRIST[Z_HEIGHT + red_foundation(foundation) * 16 + height];
}

static uint64_t turned_part(uint8_t card) {
    return ZOBRIST[Z_TURNED + (card == NO_CARD ? 52 : card)];
}

static uint64_t corner_card(int place, uint8_t card) {
    return ZOBRIST[Z_CORNER + place * 52 + card];
}

static uint64_t stock_card(int place, uint8_t card) {
    return ZOBRIST[Z_STOCK + place * 52 + card];
}

static void sum_corner(Puss *s, int corner) {
    uint64_t sum = 0;
    for (int i = 0; i < s->length[corner]; i++) sum += corner_card(i, s->corner[corner][i]);
    s->corner_sum[corner] = sum;
}

static uint64_t puss_rehash(const void *state) {
    const Puss *s = state;
    uint64_t hash = ZOBRIST[Z_PASS + s->pass] + turned_part(s->turned);
    for (int f = 0; f < FOUNDATIONS; f++) hash += height_part(f, s->height[f]);
    for (int i = 0; i < s->stock_length; i++) hash += stock_card(i, s->stock[i]);
    for (int c = 0; c < CORNERS; c++) {
        uint64_t sum = 0;
        for (int i = 0; i < s->length[c]; i++) sum += corner_card(i, s->corner[c][i]);
        uint64_t salt = sum;
        if (s->pass == 1) salt += ZOBRIST[Z_NUMBER + c];
        if (s->free >> c & 1) salt += ZOBRIST[Z_FREE];
        hash += mix64(salt);
    }
    return hash;
}

/* Set every corner sum and the hash afresh (on loading, after a gather). */
static void refresh(Puss *s) {
    for (int c = 0; c < CORNERS; c++) sum_corner(s, c);
    s->hash = puss_rehash(s);
}

/* -- loading and exporting ---------------------------------------------------------------- */

static const char *puss_load(void *state, const Layout *layout) {
    Puss *s = state;
    memset(s, 0, sizeof *s);
    if (layout->piles != PILES) return "Puss in the Corner has 10 piles";
    if (layout->fields != 3) return "Puss in the Corner has 3 state fields";
    for (int f = 0; f < FOUNDATIONS; f++) {
        int length = layout->lengths[f];
        if (length < 1 || length > 13) return "a foundation holds 1 to 13 cards";
        for (int i = 0; i < length; i++) {
            uint8_t card = layout->cards[f][i];
            if (RANK(card) != i + 1 || IS_RED(card) != red_foundation(f)) {
                return "a foundation builds up from its ace in the ace's colour";
            }
        }
        memcpy(s->foundation[f], layout->cards[f], (size_t)length);
        s->height[f] = (uint8_t)length;
    }
    for (int c = 0; c < CORNERS; c++) {
        if (layout->lengths[4 + c] > CARDS_OUT) return "a corner holds at most 48 cards";
        s->length[c] = (uint8_t)layout->lengths[4 + c];
        memcpy(s->corner[c], layout->cards[4 + c], s->length[c]);
    }
    if (layout->lengths[STOCK_PILE] > CARDS_OUT) return "the stock holds at most 48 cards";
    s->stock_length = (uint8_t)layout->lengths[STOCK_PILE];
    memcpy(s->stock, layout->cards[STOCK_PILE], s->stock_length);
    if (layout->lengths[TURNED_PILE] > 1) return "at most one card is turned";
    s->turned = layout->lengths[TURNED_PILE] ? layout->cards[TURNED_PILE][0] : NO_CARD;
    if (layout->field[0] < 1 || layout->field[0] > PASSES) return "the pass is 1 or 2";
    s->pass = (uint8_t)layout->field[0];
    long free = layout->field[1];
    if (free != 0 && free != ALL_FREE && __builtin_popcountl((unsigned long)free) != 2) {
        return "none, two or all four corners are open to a transfer";
    }
    if (free < 0 || free > ALL_FREE) return "the transfer mask is 0..15";
    s->free = (uint8_t)free;
    long seven = layout->field[2];
    if (seven != -1 && (seven < 0 || seven >= 52 || RANK(seven) != SEVEN)) {
        return "the seven is a seven's code, or -1";
    }
    s->seven = seven < 0 ? NO_CARD : (uint8_t)seven;
    refresh(s);
    return NULL;
}

static void puss_export(const void *state, Layout *layout) {
    const Puss *s = state;
    layout->piles = PILES;
    for (int f = 0; f < FOUNDATIONS; f++) {
        layout->lengths[f] = s->height[f];
        memcpy(layout->cards[f], s->foundation[f], s->height[f]);
    }
    for (int c = 0; c < CORNERS; c++) {
        layout->lengths[4 + c] = s->length[c];
        memcpy(layout->cards[4 + c], s->corner[c], s->length[c]);
    }
    layout->lengths[STOCK_PILE] = s->stock_length;
    memcpy(layout->cards[STOCK_PILE], s->stock, s->stock_length);
    layout->lengths[TURNED_PILE] = s->turned != NO_CARD;
    layout->cards[TURNED_PILE][0] = s->turned;
    layout->fields = 3;
    layout->field[0] = s->pass;
    layout->field[1] = s->free;
    layout->field[2] = s->seven == NO_CARD ? -1 : s->seven;
}

/* -- the rules ---------------------------------------------------------------------------- */

static int puss_won(const void *state) {
    const Puss *s = state;
    return s->height[0] + s->height[1] + s->height[2] + s->height[3] == 52;  /* PC-17 */
}

/* PC-5: one higher than the top, in the colour of the ace. */
static int fits(const Puss *s, uint8_t card, int foundation) {
    return RANK(card) == s->height[foundation] + 1 && IS_RED(card) == red_foundation(foundation);
}

static Move plain(int source, int target, uint8_t card) {
    Move move = {(uint8_t)source, (uint8_t)target, card, 1, 0, ACT_NONE, 0};
    return move;
}

static Move action(int act) {
    Move move = {NO_PILE, NO_PILE, NO_CARD, 1, 0, (uint8_t)act, 0};
    return move;
}

/* The moves in the engine's order (``_moves``): home moves from the corners (PC-6); then the
 * turned card's places (PC-4); or, after a seven, the transfers and ``turn`` (PC-8 .. PC-11);
 * or, the stock out in the first pass, ``redeal`` (PC-13). */
static int puss_moves(const void *state, Move *out) {
    const Puss *s = state;
    if (puss_won(s)) return 0;
    int n = 0;
    for (int c = 0; c < CORNERS; c++) {
        if (s->length[c] == 0) continue;
        uint8_t top = s->corner[c][s->length[c] - 1];
        for (int f = 0; f < FOUNDATIONS; f++) {
            if (fits(s, top, f)) out[n++] = plain(4 + c, f, top);
        }
    }
    if (s->turned != NO_CARD) {
        for (int c = 0; c < CORNERS; c++) out[n++] = plain(TURNED_PILE, 4 + c, s->turned);
        for (int f = 0; f < FOUNDATIONS; f++) {
            if (fits(s, s->turned, f)) out[n++] = plain(TURNED_PILE, f, s->turned);
        }
    } else if (s->free) {
        /* itertools.permutations(free, 2): sources in order, then targets in order. */
        for (int from = 0; from < CORNERS; from++) {
            if (!(s->free >> from & 1)) continue;
            for (int to = 0; to < CORNERS; to++) {
                if (to == from || !(s->free >> to & 1)) continue;
                for (int count = 1; count <= s->length[from]; count++) {
                    Move move = plain(4 + from, 4 + to, s->corner[from][s->length[from] - count]);
                    move.count = (uint8_t)count;
                    out[n++] = move;
                    if (s->length[to]) {
                        move.bottom = 1;
                        out[n++] = move;
                    }
                }
            }
        }
        out[n++] = action(ACT_TURN);
    } else if (s->pass < PASSES && s->stock_length == 0) {
        out[n++] = action(ACT_REDEAL);
    }
    return n;
}

static void set_free(Puss *s, uint8_t free) {
    if (free == s->free) return;
    for (int c = 0; c < CORNERS; c++) s->hash -= corner_part(s, c);
    s->free = free;
    for (int c = 0; c < CORNERS; c++) s->hash += corner_part(s, c);
}

static void push_corner(Puss *s, int c, uint8_t card) {
    s->hash -= corner_part(s, c);
    s->corner_sum[c] += corner_card(s->length[c], card);
    s->corner[c][s->length[c]++] = card;
    s->hash += corner_part(s, c);
}

static uint8_t pop_corner(Puss *s, int c) {
    s->hash -= corner_part(s, c);
    uint8_t card = s->corner[c][--s->length[c]];
    s->corner_sum[c] -= corner_card(s->length[c], card);
    s->hash += corner_part(s, c);
    return card;
}

static void push_home(Puss *s, int f, uint8_t card) {
    s->hash -= height_part(f, s->height[f]);
    s->foundation[f][s->height[f]++] = card;
    s->hash += height_part(f, s->height[f]);
}

/* PC-10, PC-3: close the transfers once no open corner holds a card; turn the next card when
 * none waits and no transfer is open. */
static void advance(Puss *s) {
    if (s->free) {
        int any = 0;
        for (int c = 0; c < CORNERS; c++) any |= (s->free >> c & 1) && s->length[c];
        if (!any) set_free(s, 0);
    }
    if (s->turned == NO_CARD && !s->free && s->stock_length) {
        s->hash -= turned_part(NO_CARD);
        uint8_t card = s->stock[--s->stock_length];
        s->hash -= stock_card(s->stock_length, card);
        s->turned = card;
        s->hash += turned_part(card);
    }
}

/* PC-14: corner:1 to corner:4, each heap's lowest card dealt first. */
static void gather(Puss *s) {
    int n = 0;
    uint8_t gathered[CARDS_OUT];
    for (int c = 0; c < CORNERS; c++) {
        memcpy(gathered + n, s->corner[c], s->length[c]);
        n += s->length[c];
        s->length[c] = 0;
    }
    for (int i = 0; i < n; i++) s->stock[i] = gathered[n - 1 - i];
    s->stock_length = (uint8_t)n;
    s->pass++;
    refresh(s);
}

static int any_home(const Puss *s) {
    for (int c = 0; c < CORNERS; c++) {
        if (s->length[c] == 0) continue;
        uint8_t top = s->corner[c][s->length[c] - 1];
        for (int f = 0; f < FOUNDATIONS; f++) {
            if (fits(s, top, f)) return 1;
        }
    }
    return 0;
}

/* PC-8, PC-9: the top ``count`` cards, order kept, onto or under the target; the second
 * transfer is between the two corners the first left alone, and closes the transfers. */
static void transfer(Puss *s, const Move *move) {
    int from = move->source - 4, to = move->target - 4, count = move->count;
    uint8_t *heap = s->corner[from], *onto = s->corner[to];
    int start = s->length[from] - count;
    for (int c = 0; c < CORNERS; c++) s->hash -= corner_part(s, c);
    for (int i = start; i < s->length[from]; i++) {
        s->corner_sum[from] -= corner_card(i, heap[i]);
    }
    if (move->bottom) {
        memmove(onto + count, onto, s->length[to]);
        memcpy(onto, heap + start, (size_t)count);
        s->length[to] = (uint8_t)(s->length[to] + count);
        sum_corner(s, to);
    } else {
        for (int i = 0; i < count; i++) {
            s->corner_sum[to] += corner_card(s->length[to] + i, heap[start + i]);
        }
        memcpy(onto + s->length[to], heap + start, (size_t)count);
        s->length[to] = (uint8_t)(s->length[to] + count);
    }
    s->length[from] = (uint8_t)start;
    s->free = s->free == ALL_FREE ? (uint8_t)(ALL_FREE & ~(1u << from) & ~(1u << to)) : 0;
    for (int c = 0; c < CORNERS; c++) s->hash += corner_part(s, c);
}

static void puss_make(void *state, const Move *move) {
    Puss *s = state;
    if (move->action == ACT_TURN) {  /* PC-10 */
        set_free(s, 0);
    } else if (move->action == ACT_REDEAL) {  /* PC-13 */
        gather(s);
    } else if (move->source == TURNED_PILE) {  /* PC-4 */
        uint8_t card = s->turned;
        s->hash += turned_part(NO_CARD) - turned_part(card);
        s->turned = NO_CARD;
        if (move->target < FOUNDATIONS) {
            push_home(s, move->target, card);
        } else {
            push_corner(s, move->target - 4, card);
        }
        if (RANK(card) == SEVEN &&
            (s->length[0] || s->length[1] || s->length[2] || s->length[3])) {  /* PC-8 */
            set_free(s, ALL_FREE);
            s->seven = card;
        }
    } else if (move->target < FOUNDATIONS) {  /* PC-6 */
        push_home(s, move->target, pop_corner(s, move->source - 4));
    } else {
        transfer(s, move);
    }
    advance(s);
    /* PC-13 (rules version 2): the gather, when it is the only thing left to do. */
    if (s->pass < PASSES && s->stock_length == 0 && s->turned == NO_CARD && !s->free &&
        !puss_won(s) && !any_home(s)) {
        gather(s);
        advance(s);
    }
}

/* -- the key ------------------------------------------------------------------------------ *
 * engine/solver/symmetry.py's: the foundations by height, the two of a colour in either
 * order (PC-5); in the second pass the corners in any order, the open ones renamed along
 * (here sorted by their cards, then by being open: the key of the whole orbit); the seven
 * left out. */

static int corner_before(const Puss *s, int a, int b) {
    int la = s->length[a], lb = s->length[b];
    int common = memcmp(s->corner[a], s->corner[b], (size_t)(la < lb ? la : lb));
    if (common) return common < 0;
    if (la != lb) return la < lb;
    return (s->free >> a & 1) < (s->free >> b & 1);
}

static int puss_key(const void *state, uint8_t *out) {
    const Puss *s = state;
    int order[CORNERS] = {0, 1, 2, 3};
    if (s->pass == PASSES) {
        for (int i = 1; i < CORNERS; i++) {
            int c = order[i], j = i - 1;
            while (j >= 0 && corner_before(s, c, order[j])) {
                order[j + 1] = order[j];
                j--;
            }
            order[j + 1] = c;
        }
    }
    int n = 0;
    out[n++] = s->pass;
    out[n++] = s->turned;
    uint8_t free = 0;
    for (int i = 0; i < CORNERS; i++) free |= (uint8_t)((s->free >> order[i] & 1) << i);
    out[n++] = free;
    int black_low = s->height[0] < s->height[3] ? s->height[0] : s->height[3];
    int red_low = s->height[1] < s->height[2] ? s->height[1] : s->height[2];
    out[n++] = (uint8_t)black_low;
    out[n++] = (uint8_t)(s->height[0] + s->height[3] - black_low);
    out[n++] = (uint8_t)red_low;
    out[n++] = (uint8_t)(s->height[1] + s->height[2] - red_low);
    out[n++] = s->stock_length;
    memcpy(out + n, s->stock, s->stock_length);
    n += s->stock_length;
    for (int i = 0; i < CORNERS; i++) {
        int c = order[i];
        out[n++] = s->length[c];
        memcpy(out + n, s->corner[c], s->length[c]);
        n += s->length[c];
    }
    return n;
}

/* -- the bound ---------------------------------------------------------------------------- *
 * engine/solver/bounds.py's ``_puss_bounds``, carried over to positions where transfers can
 * still come (docs/solver.md). In the second and last pass (PC-15) nothing is gathered again,
 * a turned card only goes on top of a corner or home (PC-4), and a corner's cards leave it only
 * home from its top (PC-6) or in a transfer, which moves a top part of one heap onto or under
 * another (PC-8): it cuts one heap in two at one place. A transfer comes only after a seven is
 * turned (two at most per seven, PC-9), so the transfers still to come are at most those open
 * now plus two for each seven turned or in the stock. Relax the game: the stock and the turned
 * card go home at any time in any order; each piece of a heap goes home from its top; a cut
 * splits a piece in two, the pieces then independent (what a transfer does, without what it
 * adds: the moved part covering or under another heap); and the two foundations of a colour
 * (two cards of each rank per colour, PC-5) act as one pile taking any card of the colour up to
 * one above the higher of them. Every winning line of the real game, read as the order its
 * cards go home and its transfers as cuts, wins the relaxed game with as many cuts as it
 * made transfers. So the position is lost if the relaxed game needs more cuts than can come.
 * With no cut to come this is exactly the Python bound (a card buried over every card out of a
 * rank it needs, or a race that leaves a card out). */

/* The two foundations' heights of a colour (0 black, 1 red), low first. */
static void colour_heights(const Puss *s, int red, int *low, int *high) {
    int a = red ? s->height[1] : s->height[0], b = red ? s->height[2] : s->height[3];
    *low = a < b ? a : b;
    *high = a < b ? b : a;
}

/* Transfers that can still come in this pass: those open now, and two for each seven still
 * to be placed (PC-8, PC-9). */
static int transfers_left(const Puss *s) {
    int left = s->free == ALL_FREE ? 2 : s->free ? 1 : 0;
    if (s->turned != NO_CARD && RANK(s->turned) == SEVEN) left += 2;
    for (int i = 0; i < s->stock_length; i++) left += 2 * (RANK(s->stock[i]) == SEVEN);
    return left;
}

/* At least how many cuts the relaxed game needs: a card c needs, before it goes home, a card
 * of each rank q between the higher foundation of its colour and c's rank (one of the two out)
 * or, when that foundation is at c's rank or above, of each rank between the lower one and
 * c's (the one copy out). If every copy out of such a rank lies beneath c in its heap, c must
 * be cut from the lowest of them: some cut between the two. One cut serves every such pair it
 * lies between; per heap the fewest cuts that lie between every pair is found greedily (pairs
 * by their upper card, a cut just under it when the last cut does not serve). With no cut to
 * come, any pair is a proof (``buried`` in engine/solver/bounds.py). */
static int cuts_needed(const Puss *s) {
    int low[2], high[2], total = 0;
    for (int red = 0; red < 2; red++) colour_heights(s, red, &low[red], &high[red]);
    for (int c = 0; c < CORNERS; c++) {
        int8_t lowest[2][14], seen[2][14];
        memset(seen, 0, sizeof seen);
        int last_cut = -1;
        for (int i = 0; i < s->length[c]; i++) {
            uint8_t card = s->corner[c][i];
            int red = IS_RED(card), rank = RANK(card), left = -1;
            int from = high[red] < rank ? high[red] : low[red];
            int out = high[red] < rank ? 2 : 1;
            for (int q = from + 1; q < rank; q++) {
                if (seen[red][q] == out && lowest[red][q] > left) left = lowest[red][q];
            }
            if (left >= 0 && left > last_cut) {
                last_cut = i - 1;  /* just under c */
                total++;
            }
            if (seen[red][rank]++ == 0) lowest[red][rank] = (int8_t)i;
        }
    }
    return total;
}

/* The relaxed race: pieces of heaps (a range of a corner's cards, bottom to top), the level
 * of each colour and the ranks free in the stock and the turned card. */
typedef struct {
    int8_t corner, bottom, top;      /* cards bottom .. top - 1 of the corner */
} Piece;

#define MOST_CUTS 2
typedef struct {
    int level[2], loose[2], count;
    Piece piece[CORNERS + MOST_CUTS];
} Race;

/* Bring home whatever the relaxed game can without a cut. */
static void settle(const Puss *s, Race *race) {
    int grew = 1;
    while (grew) {
        grew = 0;
        for (int red = 0; red < 2; red++) {
            while (race->loose[red] >> (race->level[red] + 1) & 1) {
                race->level[red]++;
                grew = 1;
            }
        }
        for (int p = 0; p < race->count; p++) {
            Piece *piece = &race->piece[p];
            while (piece->top > piece->bottom) {
                uint8_t card = s->corner[piece->corner][piece->top - 1];
                int red = IS_RED(card), rank = RANK(card);
                if (rank > race->level[red] + 1) break;
                piece->top--;
                if (rank == race->level[red] + 1) {
                    race->level[red]++;
                    grew = 1;
                }
            }
        }
    }
}

/* Whether the relaxed game wins with at most ``cuts`` cuts. A cut is needed only to bare a
 * card that could go home (a cut elsewhere can wait until the card under it could go home,
 * and then be made just above that card: no worse), so the cuts tried are those just above a
 * covered card that could go home now. */
static int race_wins(const Puss *s, const Race *start, int cuts) {
    Race race = *start;
    settle(s, &race);
    int left = 0;
    for (int p = 0; p < race.count; p++) left |= race.piece[p].top > race.piece[p].bottom;
    if (!left) return race.level[0] == 13 && race.level[1] == 13;
    if (cuts == 0) return 0;
    for (int p = 0; p < race.count; p++) {
        Piece piece = race.piece[p];
        for (int i = piece.bottom; i < piece.top - 1; i++) {
            uint8_t card = s->corner[piece.corner][i];
            if (RANK(card) > race.level[IS_RED(card)] + 1) continue;
            Race cut = race;
            cut.piece[p].top = (int8_t)(i + 1);
            cut.piece[cut.count++] = (Piece){piece.corner, (int8_t)(i + 1), piece.top};
            if (race_wins(s, &cut, cuts - 1)) return 1;
        }
    }
    return 0;
}

static int race_lost(const Puss *s, int cuts) {
    Race race;
    int low;
    race.loose[0] = race.loose[1] = 0;
    for (int red = 0; red < 2; red++) colour_heights(s, red, &low, &race.level[red]);
    for (int i = 0; i < s->stock_length; i++) {
        race.loose[IS_RED(s->stock[i])] |= 1 << RANK(s->stock[i]);
    }
    if (s->turned != NO_CARD) race.loose[IS_RED(s->turned)] |= 1 << RANK(s->turned);
    race.count = CORNERS;
    for (int c = 0; c < CORNERS; c++) race.piece[c] = (Piece){(int8_t)c, 0, (int8_t)s->length[c]};
    return !race_wins(s, &race, cuts);
}

static int puss_dead(const void *state) {
    const Puss *s = state;
    if (s->pass != PASSES) return 0;
    int cuts = transfers_left(s);
    if (cuts_needed(s) > cuts) return 1;
    return cuts <= MOST_CUTS && race_lost(s, cuts);
}

/* -- safe moves --------------------------------------------------------------------------- *
 * A card goes home (from a corner's top, or the turned card) onto a foundation at one below
 * it, while the other foundation of its colour is at least as high as that: no rank-r card of
 * the colour can go home anywhere else first, so taking it home now loses no win
 * (docs/solver.md). Before the last pass a seven is left out: gathered, it would be turned
 * again and open transfers once more. */
static int puss_safe(const void *state, const Move *move) {
    const Puss *s = state;
    if (move->action != ACT_NONE || move->target >= FOUNDATIONS) return 0;
    int rank = RANK(move->card), low, high;
    colour_heights(s, IS_RED(move->card), &low, &high);
    if (low < rank - 1) return 0;
    return s->pass == PASSES || rank != SEVEN;
}

/* -- move orders -------------------------------------------------------------------------- */

static int home_moves(const Puss *s) {
    if (puss_won(s)) return 0;
    int n = 0;
    for (int c = 0; c < CORNERS; c++) {
        if (s->length[c] == 0) continue;
        uint8_t top = s->corner[c][s->length[c] - 1];
        for (int f = 0; f < FOUNDATIONS; f++) n += fits(s, top, f);
    }
    if (s->turned != NO_CARD) {
        for (int f = 0; f < FOUNDATIONS; f++) n += fits(s, s->turned, f);
    }
    return n;
}

/* engine/solver/search.py's ``_puss_order`` for a turned card: onto the corner whose top is
 * the nearest rank above it, then an empty corner, then onto lower tops, the highest first. */
static int nearest_above(const Puss *s, int corner, uint8_t card) {
    if (s->length[corner] == 0) return 14;
    int top = RANK(s->corner[corner][s->length[corner] - 1]);
    return top > RANK(card) ? top - RANK(card) : 28 - top;
}

/* Variant 0, search.py's order: home first; a turned card by ``nearest_above``; otherwise
 * (transfers, ``turn``) by how many moves home the position after the move offers, most
 * first; ``redeal`` last. */
static void order_plain(const Puss *s, Move *moves, int count) {
    for (int i = 0; i < count; i++) {
        Move *move = &moves[i];
        if (move->action == ACT_REDEAL) {
            move->order = 1000;
        } else if (move->action == ACT_NONE && move->target < FOUNDATIONS) {
            move->order = 0;
        } else if (s->turned != NO_CARD) {
            move->order = (int16_t)nearest_above(s, move->target - 4, s->turned);
        } else {
            Puss after = *s;
            puss_make(&after, move);
            move->order = (int16_t)(100 - home_moves(&after));
        }
    }
}

/* How many cards of its colour must go home before ``card`` can (PC-5): those between the
 * higher foundation of its colour and it, or, when that one is at its rank or above, between
 * the lower one and it. */
static int need(const Puss *s, uint8_t card) {
    int low, high, rank = RANK(card);
    colour_heights(s, IS_RED(card), &low, &high);
    return rank > high ? rank - high - 1 : rank - low - 1;
}

/* Cards lying over a card wanted sooner than they are, over all corners. */
static int disorder(const Puss *s) {
    int bad = 0;
    for (int c = 0; c < CORNERS; c++) {
        int soonest = 99;
        for (int i = 0; i < s->length[c]; i++) {
            int wanted = need(s, s->corner[c][i]);
            if (wanted > soonest) {
                bad++;
            } else {
                soonest = wanted;
            }
        }
    }
    return bad;
}

/* A turned card onto a corner by need: first onto a top wanted after it (``strict``; or no
 * sooner), the one wanted soonest; an empty corner first (``empty_first``) or next; then over
 * a top wanted sooner, the one wanted latest first. */
static int by_need(const Puss *s, int corner, uint8_t card, int empty_first, int strict) {
    if (s->length[corner] == 0) return empty_first ? 1 : 20;
    int mine = need(s, card), top = need(s, s->corner[corner][s->length[corner] - 1]);
    return top > mine || (top == mine && !strict) ? 2 + top - mine : 40 - top;
}

/* Variants 1 to 3: home first; a turned card by ``by_need``; a transfer or ``turn`` by the
 * corners it leaves: the fewer cards over a card wanted sooner, and the more moves home, the
 * better; ``redeal`` last. */
static void order_need(const Puss *s, Move *moves, int count, int empty_first, int strict) {
    for (int i = 0; i < count; i++) {
        Move *move = &moves[i];
        if (move->action == ACT_REDEAL) {
            move->order = 1000;
        } else if (move->action == ACT_NONE && move->target < FOUNDATIONS) {
            move->order = 0;
        } else if (s->turned != NO_CARD) {
            move->order = (int16_t)by_need(s, move->target - 4, s->turned, empty_first, strict);
        } else {
            Puss after = *s;
            puss_make(&after, move);
            move->order = (int16_t)(200 + 4 * disorder(&after) - 3 * home_moves(&after));
        }
    }
}

/* The move orders (docs/solver.md): 0, engine/solver/search.py's; 1, by need, a top wanted
 * as soon as the card counting as one it would bury; 2, by need, an empty corner first; 3, by
 * need, a top wanted as soon counting as a good place. */
static void puss_order(const void *state, Move *moves, int count, int variant) {
    const Puss *s = state;
    switch (variant) {
    case 1:
        order_need(s, moves, count, 0, 1);
        break;
    case 2:
        order_need(s, moves, count, 1, 0);
        break;
    case 3:
        order_need(s, moves, count, 0, 0);
        break;
    default:
        order_plain(s, moves, count);
    }
}

const RuleSet PUSS_IN_THE_CORNER = {
    .name = "puss-in-the-corner",
    .state_size = sizeof(Puss),
    .load = puss_load,
    .export = puss_export,
    .moves = puss_moves,
    .make = puss_make,
    .won = puss_won,
    .rehash = puss_rehash,
    .key = puss_key,
    .dead = puss_dead,
    .order = puss_order,
    .safe = puss_safe,
};
