// Where the books' pictures ask for more than the grid of GET /api/games gives: per rule set,
// piles turned on the table, fans that run another way, fans that grow upwards from the bottom
// of their place, and how many cards a fan is given room for before it is squeezed (the board
// keeps that room from the start, so that a growing pile never moves the others): at most
// `fanRoom`, at least `fanRoomLeast`. (Alignments
// that change nothing but the look are in style.css, under .board[data-rule-set=...].)

const FOUR_CORNERS_DIAGONAL = { "left:1": 45, "right:1": -45, "left:6": -45, "right:6": 45 };
const CORNERSTONES_SIDEWAYS = { "left:1": 90, "right:1": 90, "left:6": 90, "right:6": 90 };

export const REFINEMENTS = {
  // The corner heaps take what the stock turns up, and grow long; the top two grow upwards,
  // away from the square of aces between them.
  "puss-in-the-corner": { fanRoom: 9, anchor: { "corner:1": "bottom", "corner:2": "bottom" } },
  // Only a heap's top card is ever played, and the cards placed under it are done with: where
  // the height is short its fan may start with room for two strips more (a phone's heaps).
  "all-fours": { fanRoomLeast: 2 },
  // "first the left-hand corner card at top (placed diagonally)" (Cadogan No. 33)
  "four-corners": { rotate: FOUR_CORNERS_DIAGONAL },
  // "The base cards on the top and bottom of the columns are turned sideways."
  "cornerstones": { rotate: CORNERSTONES_SIDEWAYS },
  "cornerstones-arnold": { rotate: CORNERSTONES_SIDEWAYS },
  // "across each of the open spaces left at the corners place a packet of five auxiliary
  // cards, laid slantwise, so as to form an octagon": each packet fans along its corner's edge
  // (downwards, so every card's index reads the right way up).
  "octagon": {
    spread: {
      "aux:1": "down-left", "aux:2": "down-right", "aux:3": "down-left", "aux:4": "down-right",
    },
  },
};

// A fanned pile is given room for this many cards beyond its first at their natural spacing,
// or down to FAN_ROOM_LEAST where the height is short and the cards larger for it (board.js).
const FAN_ROOM = 6;
const FAN_ROOM_LEAST = 4;

export function refinement(ruleSet) {
  return { rotate: {}, spread: {}, anchor: {}, fanRoom: FAN_ROOM, fanRoomLeast: FAN_ROOM_LEAST,
    ...REFINEMENTS[ruleSet] };
}
