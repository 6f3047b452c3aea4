'use strict';
/**
 * What the Node.js bot plays: one legal action for each DecisionRequest.
 *
 * Every function gets the DecisionRequest as decoded by @grpc/proto-loader (snake_case
 * field names, enums as their names, a virtual `observation` / `value` property naming the
 * oneof member that is set) and returns one of the request's own `legal` actions, so the
 * answer is always well formed and legal.
 */

const ROW_LIMIT = 5; // a sixth card takes the row (docs/rules.md, 6 nimmt! rule 3)

/** Bullheads on a 6 nimmt! card: 55 → 7, multiples of 11 → 5, of 10 → 3, of 5 → 2, else 1. */
function bullheads(card) {
  if (card === 55) return 7;
  if (card % 11 === 0) return 5;
  if (card % 10 === 0) return 3;
  if (card % 5 === 0) return 2;
  return 1;
}

/** Bullheads of a whole row (an array of cards). */
function rowCost(row) {
  return row.reduce((sum, card) => sum + bullheads(card), 0);
}

/** [bullheads taken, gap to the row end] if `card` were placed alone on `rows` now. */
function immediateCost(card, rows) {
  let best = null;
  for (const row of rows) {
    const end = row[row.length - 1];
    if (end < card && (best === null || card - end < best.gap)) best = { gap: card - end, row };
  }
  if (best === null) return [Math.min(...rows.map(rowCost)), 0];
  return [best.row.length >= ROW_LIMIT ? rowCost(best.row) : 0, best.gap];
}

/** Compare two arrays of numbers lexicographically. */
function lexCompare(a, b) {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    if (a[i] !== b[i]) return a[i] - b[i];
  }
  return a.length - b.length;
}

/** The legal action with the smallest key (a number array), ties to the earliest. */
function minBy(legal, key) {
  let best = legal[0];
  let bestKey = key(best);
  for (const action of legal.slice(1)) {
    const k = key(action);
    if (lexCompare(k, bestKey) < 0) {
      best = action;
      bestKey = k;
    }
  }
  return best;
}

/** The legal action whose word is `word`, else the first legal action. */
function word(legal, wanted) {
  return legal.find((a) => a.word === wanted) || legal[0];
}

/**
 * Choose an action for `request`: 6 nimmt! one ply deep (the card that costs least now,
 * tight fits first; the row with the fewest bullheads), No Thanks! by a pot threshold.
 */
function choose(request) {
  const legal = request.legal;
  if (!legal || legal.length === 0) throw new Error(`decision ${request.decision_id} has no legal action`);
  const six = request.six_nimmt;
  const rows = six ? six.rows.map((r) => r.cards) : [];
  switch (request.kind) {
    case 'DECISION_KIND_PLAY_CARD':
      return minBy(legal, (a) => [...immediateCost(a.card, rows), a.card]);
    case 'DECISION_KIND_CHOOSE_ROW':
      return minBy(legal, (a) => [rowCost(rows[a.row]), rows[a.row].length, a.row]);
    case 'DECISION_KIND_DRAFT_CARD':
      return minBy(legal, (a) => [bullheads(a.card), a.card]);
    case 'DECISION_KIND_TAKE_OR_PASS': {
      const obs = request.no_thanks;
      const take = obs.chips === 0 || obs.card - obs.pot <= 10;
      return word(legal, take ? 'take' : 'pass');
    }
    case 'DECISION_KIND_REVEAL_HIDDEN_CARD':
      return word(legal, 'keep');
    default:
      return legal[0];
  }
}

/** An action of the right type that is surely not legal (for exercising rejections). */
function illegal(request) {
  if (request.kind === 'DECISION_KIND_CHOOSE_ROW') return { row: 99 };
  if (request.kind === 'DECISION_KIND_PLAY_CARD' || request.kind === 'DECISION_KIND_DRAFT_CARD') {
    return { card: 0 };
  }
  return { word: 'not-a-move' };
}

module.exports = { bullheads, rowCost, immediateCost, choose, illegal };
