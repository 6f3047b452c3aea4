// 6 nimmt!'s view on the web page (docs/rules.md §1), given by the game's spec
// (GameSpec.web_view) and served at /games/six_nimmt/view.js: its cards with their
// bullheads, its rows, its replay trick by trick, its live table, a person's seat and the big
// screen. The page's helpers (h, table, tr, botLink, answerNote, ...) come from app.js; what
// the page does not find here it draws with its generic view.
"use strict";

(() => {
  const ROW_LIMIT = 5;  // a row holds five cards; the sixth takes them

  /** The bullheads of a card. */
  function bullheads(card) {
    if (card === 55) return 7;
    if (card % 11 === 0) return 5;
    if (card % 10 === 0) return 3;
    if (card % 5 === 0) return 2;
    return 1;
  }

  function heads(cards) { return cards.reduce((sum, c) => sum + bullheads(c), 0); }

  function nimmtCard(card, isNew) {
    const n = bullheads(card);
    return h("span", {class: `card b${n}${isNew ? " new" : ""}`, "data-card": card,
                      title: `${card}: ${n} bullhead${n > 1 ? "s" : ""}`},
             String(card), h("small", {"aria-hidden": "true"}, "•".repeat(n)),
             srOnly(` (${n} bullhead${n > 1 ? "s" : ""}${isNew ? ", just played" : ""})`));
  }

  /** A large card for the big screen, with its bullheads. */
  function bigCard(card) {
    const n = bullheads(card);
    return h("span", {class: `tvcard b${n}`, "data-card": card},
      h("span", {class: "num"}, card),
      h("span", {class: "heads", "aria-hidden": "true"}, "•".repeat(n)),
      h("span", {class: "sr-only"}, ` (${n} bullhead${n > 1 ? "s" : ""})`));
  }

  function rowsView(rows, marks, fresh, testid) {
    return h("div", {class: "rows", "data-testid": testid || "rows"}, rows.map((row, i) =>
      h("div", {class: `row${marks && marks[i] ? " chosen" : ""}`, "data-row": i},
        h("span", {class: "label"}, `row ${i + 1}`),
        h("span", {class: "cards"}, row.map((c) => nimmtCard(c, fresh && fresh.has(c)))),
        marks && marks[i] ? h("span", {class: "mark", "data-testid": "row-mark"}, marks[i])
                          : null)));
  }

  // -- the replay --------------------------------------------------------------------------

  /** The answers of a replay's log by trick (rounds in a row): each trick's card answers by
   * seat and its row choice answer. */
  function trickAnswers(replay) {
    const tricks = [];
    let lastStep = null;
    for (const event of replay.events || []) {
      if (event.type !== "answer") continue;
      if (event.kind === "PLAY_CARD") {
        if (event.step !== lastStep) { tricks.push({plays: {}, row: null}); lastStep = event.step; }
        tricks[tricks.length - 1].plays[event.seat] = event;
      } else if (event.kind === "CHOOSE_ROW" && tricks.length) {
        tricks[tricks.length - 1].row = event;
      }
    }
    return tricks;
  }

  function replaySteps(replay) {
    const seats = replay.seats.length;
    const answers = trickAnswers(replay);
    const steps = [];
    let before = new Array(seats).fill(0);  // totals of finished rounds
    let trickNumber = 0;
    replay.rounds.forEach((round, r) => {
      const penalties = new Array(seats).fill(0);
      const piles = Array.from({length: seats}, () => []);
      let hands = (round.hands || []).map((hand) => [...hand]);
      steps.push({round: r, trick: null, rows: round.rows, draft: round.draft || null,
                  hands: hands.map((x) => [...x]), penalties: [...penalties],
                  piles: piles.map((p) => [...p]), totals: [...before]});
      let rows = round.rows;
      round.tricks.forEach((trick, t) => {
        trick.taken.forEach((cards, s) => {
          piles[s].push(...cards);
          penalties[s] += heads(cards);
        });
        hands = hands.map((hand, s) => hand.filter((c) => c !== trick.plays[s]));
        steps.push({round: r, trick: t, rowsBefore: rows, rows: trick.rows_after,
                    plays: trick.plays, rowChoice: trick.row_choice, taken: trick.taken,
                    answers: answers[trickNumber] || null, hands: hands.map((x) => [...x]),
                    penalties: [...penalties], piles: piles.map((p) => [...p]),
                    totals: before.map((b, s) => b + penalties[s])});
        rows = trick.rows_after;
        trickNumber += 1;
      });
      before = before.map((b, s) => b + round.penalties[s]);
    });
    return steps;
  }

  /** The answers a step shows: its cards by seat and its row choice. */
  function stepAnswers(step) {
    if (!step.answers) return [];
    return [...Object.values(step.answers.plays), step.answers.row];
  }

  /** Where each card of a trick went and why, lowest first (docs/rules.md §1). */
  function placements(rowsBefore, plays, rowChoice) {
    const rows = rowsBefore.map((row) => [...row]);
    const order = plays.map((card, seat) => ({card, seat})).sort((a, b) => a.card - b.card);
    return order.map(({card, seat}) => {
      let best = null;
      rows.forEach((row, i) => {
        const end = row[row.length - 1];
        if (end < card && (best === null || end > rows[best][rows[best].length - 1])) best = i;
      });
      if (best === null) {
        const row = rowChoice ? rowChoice.row : 0;
        const taken = rows[row];
        rows[row] = [card];
        return {card, seat, row, why: "lowest", taken};
      }
      const end = rows[best][rows[best].length - 1];
      if (rows[best].length >= ROW_LIMIT) {
        const taken = rows[best];
        rows[best] = [card];
        return {card, seat, row: best, why: "sixth", taken, end};
      }
      rows[best].push(card);
      return {card, seat, row: best, why: "follows", taken: [], end};
    });
  }

  function placementLine(p, names, rowAnswer) {
    const who = names[p.seat];
    const card = nimmtCard(p.card);
    if (p.why === "lowest") {
      return h("li", {"data-why": "lowest"}, card, ` ${who}: lower than every row, so `,
        `${who} chose row ${p.row + 1} and takes its ${p.taken.length} card`,
        p.taken.length === 1 ? "" : "s", ` (${heads(p.taken)} bullheads) `,
        h("span", {class: "answer"}, "· ", answerNote(rowAnswer)));
    }
    if (p.why === "sixth") {
      return h("li", {"data-why": "sixth"}, card, ` ${who}: goes after ${p.end} in row `,
        `${p.row + 1} as its sixth card, so ${who} takes its five cards (${heads(p.taken)} `,
        "bullheads)");
    }
    return h("li", {"data-why": "follows"}, card, ` ${who}: after ${p.end} in row ${p.row + 1}`);
  }

  function replayStep(step, names, replay, bots) {
    const rounds = replay.rounds.length;
    const where = step.trick === null
      ? `Round ${step.round + 1} of ${rounds} · the deal: four starting rows`
      : `Round ${step.round + 1} of ${rounds} · trick ${step.trick + 1} of ` +
        `${replay.rounds[step.round].tricks.length}`;
    const parts = [h("p", {class: "big", "data-testid": "where"}, where)];
    const answers = step.answers;
    if (step.trick === null) {
      parts.push(rowsView(step.rows, null, null));
      if (step.draft) parts.push(h("p", {class: "muted"}, "Draft: ",
        step.draft.map((d) => `${names[d.seat]} ${d.card}`).join(", ")));
    } else {
      const placed = placements(step.rowsBefore, step.plays, step.rowChoice);
      const marks = {};
      for (const p of placed) {
        if (p.why !== "follows") {
          marks[p.row] = `✱ taken by ${names[p.seat]} (${p.why === "lowest" ? "chosen" : "sixth card"})`;
        }
      }
      parts.push(h("h2", {}, "Rows before the trick"), rowsView(step.rowsBefore, null, null,
                                                                "rows-before"),
        h("h2", {}, "Revealed, placed lowest first"),
        h("div", {class: "cards", "data-testid": "revealed"}, placed.map(({card, seat}) =>
          h("span", {class: "revealed"}, nimmtCard(card), " ",
            h("span", {class: "muted"}, names[seat])))),
        h("ol", {class: "placements", "data-testid": "placements"}, placed.map((p) =>
          placementLine(p, names, answers && answers.row))));
      if (step.rowChoice) {
        parts.push(h("p", {"data-testid": "row-choice"}, `${names[step.rowChoice.seat]} played `,
          `the lowest card and chose row ${step.rowChoice.row + 1}.`));
      }
      parts.push(h("h2", {}, "Rows after the trick"),
        rowsView(step.rows, marks, new Set(step.plays)));
    }
    const banked = bankOf(replay) > 0;
    const cols = [["Seat"], ["Hand"], ["Played"], ["Answer"], ["Took this trick"],
                  ["Bullheads this round", "num"], ["Running total", "num"],
                  ...(banked ? [["Bank left", "num"]] : [])];
    parts.push(h("h2", {}, "Seats"), table("Seats", cols,
      names.map((name, s) => tr({"data-seat": s}, cols, [
        botLink(name, bots[s], replay.seats[s].human),
        {attrs: {"data-testid": "hand"}, content: cardList(step.hands[s] || [], (c) => nimmtCard(c))},
        step.plays ? nimmtCard(step.plays[s]) : "",
        answers ? answerNote(answers.plays[s]) : "",
        cardList(step.taken ? step.taken[s] : [], (c) => nimmtCard(c)),
        step.penalties[s],
        {attrs: {"data-testid": "total"}, content: step.totals[s]},
        ...(banked ? [bankCell(step, s)] : [])])), {"data-testid": "seats"}));
    return h("div", {}, parts);
  }

  // -- a live match ------------------------------------------------------------------------

  function liveState(state) {
    Object.assign(state, {trick: 0, rows: [], plays: null, rowChoice: null, taken: null,
                          penalties: state.names.map(() => 0), scores: null});
  }

  function applyPublic(state, event) {
    const d = event.data;
    const names = state.names;
    switch (event.type) {
      case "RoundStarted":
        state.round = d.round;
        state.rows = d.rows; state.trick = 0; state.plays = null; state.taken = null;
        state.penalties = state.penalties.map(() => 0);
        state.log.push(`Round ${d.round + 1} starts.`);
        break;
      case "CardsRevealed":
        state.plays = d.plays; state.trick = d.trick; state.taken = null; state.rowChoice = null;
        state.log.push(`Trick ${d.trick + 1}: ${d.plays.map((c, s) => `${names[s]} ${c}`).join(", ")}.`);
        break;
      case "TrickResolved":
        state.plays = d.plays; state.trick = d.trick; state.rows = d.rows_after;
        state.rowChoice = d.row_choice; state.taken = d.taken;
        d.taken.forEach((cards, s) => { state.penalties[s] += heads(cards); });
        if (d.row_choice) state.log.push(`${names[d.row_choice.seat]} chose row ${d.row_choice.row + 1}.`);
        break;
      case "CardDrafted":
        state.log.push(`${names[d.seat]} drafted ${d.card}.`);
        break;
      case "RoundEnded":
        state.totals = d.totals; state.scores = d.penalties;
        state.log.push(`Round ${d.round + 1} ends: ${d.totals.join(" · ")}.`);
        break;
      case "GameEnded":
        state.totals = d.totals;
        break;
      default:
        state.log.push(event.type);
    }
  }

  function live(state) {
    const cols = [["Seat"], ["Revealed"], ["Took"], ["Bullheads this round", "num"],
                  ["Total of finished rounds", "num"]];
    const marks = state.rowChoice ? {[state.rowChoice.row]:
      `✱ chosen by ${state.names[state.rowChoice.seat]}`} : null;
    return h("div", {},
      h("p", {class: "big", "data-testid": "where"},
        `Round ${state.round + 1} · trick ${state.plays ? state.trick + 1 : "—"}`),
      h("h2", {}, "Rows"), rowsView(state.rows, marks, state.plays ? new Set(state.plays) : null),
      h("h2", {}, "Seats"), table("Seats", cols,
        state.names.map((name, s) => tr({"data-seat": s}, cols, [
          botLink(name, state.bots[s], state.humans.includes(s)),
          state.plays ? nimmtCard(state.plays[s]) : "",
          cardList(state.taken ? state.taken[s] : [], (c) => nimmtCard(c)),
          state.penalties[s],
          {attrs: {"data-testid": "total"}, content: state.totals[s]}])), {"data-testid": "seats"}));
  }

  // -- a person's seat (play.js) -----------------------------------------------------------

  const prompts = {
    DECISION_KIND_PLAY_CARD: "Play a card: click it, or pick it with ← → and press Enter.",
    DECISION_KIND_CHOOSE_ROW: "Your card is lower than every row: choose the row you take " +
                              "(click it, or press 1–4).",
    DECISION_KIND_DRAFT_CARD: "Draft a card from the pool.",
  };

  function fromObservation(pub, obs) {
    pub.round = obs.round;
    pub.totals = obs.totals;
    pub.rows = obs.rows.map((r) => r.cards);
    pub.penalties = obs.penalties;
  }

  /** What ``event`` did for the seat's decision, if it settles it: {done, same}. */
  function resolves(event, decision, choice, seat) {
    const d = event.data;
    const kind = decision.kind;
    if (event.type === "CardsRevealed" && kind === "DECISION_KIND_PLAY_CARD") {
      return {done: `played ${d.plays[seat]}`, same: choice.card === d.plays[seat]};
    }
    if (event.type === "TrickResolved" && kind === "DECISION_KIND_CHOOSE_ROW" &&
        d.row_choice && d.row_choice.seat === seat) {
      return {done: `chose row ${d.row_choice.row + 1}`, same: choice.row === d.row_choice.row};
    }
    if (event.type === "CardDrafted" && kind === "DECISION_KIND_DRAFT_CARD" && d.seat === seat) {
      return {done: `drafted ${d.card}`, same: choice.card === d.card};
    }
    return null;
  }

  function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

  function rowButtons(rows, seat) {
    const legal = seat.legalSet(seat.play.decision);
    const choosing = seat.waiting() && seat.play.decision.kind === "DECISION_KIND_CHOOSE_ROW";
    return h("div", {class: "rows", "data-testid": "rows"}, rows.map((row, i) => {
      const cards = h("span", {class: "cards"}, row.map((c) => nimmtCard(c)));
      if (!choosing) {
        return h("div", {class: "row", "data-row": i}, h("span", {class: "label"}, `row ${i + 1}`),
                 cards);
      }
      return h("button", {class: "row pick", "data-row": i, "data-testid": "row-button",
                          disabled: !legal.has(`row${i}`),
                          onclick: () => seat.answer({row: i}, `chose row ${i + 1}`)},
        h("span", {class: "label"}, `row ${i + 1}`), cards,
        h("span", {class: "mark"}, `take ${plural(row.length, "card")} · ` +
                                   plural(heads(row), "bullhead")));
    }));
  }

  function handButtons(cards, kind, seat) {
    const play = seat.play;
    const legal = seat.legalSet(play.decision);
    const mine = seat.waiting() && play.decision.kind === kind;
    return h("div", {class: "cards hand", "data-testid": kind === "DECISION_KIND_DRAFT_CARD"
                                                           ? "pool" : "hand",
                     onkeydown: seat.arrowKeys},
      cards.length ? cards.map((card) => h("button", {
        class: `card-button${play.choice && play.choice.card === card && play.decision
                             ? " picked" : ""}`,
        "data-play": card, disabled: !(mine && legal.has(card)),
        onclick: () => seat.answer({card}, `played ${card}`)}, nimmtCard(card)))
        : h("span", {class: "muted"}, "no cards"));
  }

  function playTable(seat) {
    const play = seat.play, pub = play.pub, obs = play.obs;
    const trickLine = pub.plays ? h("p", {"data-testid": "last-trick"},
      `Trick ${pub.trick + 1}: `, pub.plays.map((c, s) => [s ? " · " : "",
        `${pub.names[s]} `, nimmtCard(c)]).flat()) : null;
    const hand = obs && obs.round === pub.round ? obs.hand.filter((c) => !play.ended &&
      !(pub.plays && pub.plays[play.seat] === c && pub.trick >= obs.trick)) : [];
    const cols = [["Seat"], ["Played"], ["Took"], ["Bullheads this round", "num"],
                  ["Total of finished rounds", "num"]];
    return [
      h("p", {class: "muted", "data-testid": "where"}, `Round ${pub.round + 1}`,
        obs ? ` · trick ${obs.trick + 1} of 10` : ""),
      h("h2", {}, "The rows"), rowButtons(pub.rows, seat),
      trickLine,
      h("h2", {}, "Your hand"), handButtons(hand, "DECISION_KIND_PLAY_CARD", seat),
      obs && obs.pool && obs.pool.length
        ? [h("h2", {}, "The draft pool"), handButtons(obs.pool, "DECISION_KIND_DRAFT_CARD", seat)]
        : null,
      h("h2", {}, "Seats"), seat.seatsTable(cols, (name, s) => [
        s === play.seat ? h("strong", {}, "you") : name,
        pub.plays ? nimmtCard(pub.plays[s]) : "",
        cardList(pub.taken ? pub.taken[s] : [], (c) => nimmtCard(c)),
        pub.penalties[s], {attrs: {"data-testid": "total"}, content: pub.totals[s]}])];
  }

  /** Keys: 1–4 choose a row. */
  function playKeys(e, seat) {
    if (seat.play.decision.kind !== "DECISION_KIND_CHOOSE_ROW" || !/^[1-9]$/.test(e.key)) return;
    const row = Number(e.key) - 1;
    if (seat.legalSet(seat.play.decision).has(`row${row}`)) {
      seat.answer({row}, `chose row ${row + 1}`);
    }
  }

  // -- the big screen (tv.js) --------------------------------------------------------------

  /** The table: four rows and the cards played this trick. */
  function tvTable(match, kit) {
    const rows = [0, 1, 2, 3].map((i) => h("div", {class: "row", "data-row": i},
      h("span", {class: "label"}, `row ${i + 1}`),
      h("div", {class: "cards", "data-testid": "tv-row"})));
    const slots = match.seats.map((name, s) => h("li", {"data-seat": s},
      h("span", {class: "who"}, name), h("div", {class: "slot"}), h("span", {class: "took"}),
      h("q", {class: "said", "data-testid": "tv-comment"})));
    const root = h("div", {class: "table six-nimmt"},
      h("h3", {class: "sr-only"}, "Rows"), h("div", {class: "rows"}, rows),
      h("h3", {class: "played-title"}, "Played this trick"),
      h("ol", {class: "played", "data-testid": "tv-played"}, slots));
    function draw(state, event) {
      if (event.type === "RoundStarted" || event.type === "TrickResolved") {
        state.rows.forEach((row, i) => {
          kit.syncCards(rows[i].querySelector(".cards"), row, "six_nimmt");
          rows[i].classList.toggle("chosen", Boolean(state.rowChoice &&
            state.rowChoice.row === i && event.type === "TrickResolved"));
        });
      }
      if (event.type === "RoundStarted") {
        for (const slot of slots) {
          kit.syncCards(slot.querySelector(".slot"), [], "six_nimmt");
          slot.querySelector(".took").textContent = "";
        }
      }
      if (event.type === "CardsRevealed") {
        slots.forEach((slot, s) => {
          slot.classList.remove("placed");
          kit.syncCards(slot.querySelector(".slot"), [state.plays[s]], "six_nimmt");
          slot.querySelector(".took").textContent = "";
        });
      }
      if (event.type === "TrickResolved") {
        slots.forEach((slot, s) => {
          slot.classList.add("placed");
          const taken = state.taken[s] || [];
          const took = slot.querySelector(".took");
          took.textContent = taken.length
            ? `took ${taken.length} card${taken.length > 1 ? "s" : ""} · ` +
              `${heads(taken)} bullhead${heads(taken) > 1 ? "s" : ""}` : "";
          took.classList.toggle("bad", taken.length > 0);
        });
      }
    }
    return {root, draw, say: kit.sayIn(slots)};
  }

  /** Which move of the feed an answer of the replay's log comments on: every seat's card
   * of a trick at once, or a row choice. */
  function commentKind(answer) {
    if (answer.kind === "PLAY_CARD") return {kind: "CardsRevealed", byStep: true};
    if (answer.kind === "CHOOSE_ROW") return {kind: "RowChosen", byStep: false};
    return null;  // a draft pick: no move shown
  }

  function moveOf(event, state) {
    switch (event.type) {
      case "CardsRevealed": return {kind: "CardsRevealed", clear: true};
      case "TrickResolved":
        return state.rowChoice ? {kind: "RowChosen", clear: false} : null;
      case "RoundStarted": return {kind: null, clear: true};
      default: return null;
    }
  }

  function whereText(state, event, roundOpen) {
    const round = `Round ${state.round + 1}`;
    switch (event.type) {
      case "RoundStarted": return `${round}: the deal`;
      case "CardsRevealed": return `${round} · trick ${state.trick + 1}: the cards are revealed`;
      case "TrickResolved": return `${round} · trick ${state.trick + 1}: the cards are placed`;
      case "RoundEnded": return `${round} is over`;
      case "GameEnded": return "The game is over";
      default: return roundOpen ? round : "";
    }
  }

  /** A seat on the scoreboard: its running total, this round's bullheads counted. */
  function tvScore(state, s, roundOpen) {
    const thisRound = roundOpen ? state.penalties[s] : 0;
    return {running: state.totals[s] + thisRound, sub: `${thisRound} this round`};
  }

  registerGameView("six_nimmt", {
    quickPlay: {settings: {rounds: "1"}, note: " (one round)"},
    bigCard, replaySteps, stepAnswers, replayStep, liveState, applyPublic, live,
    prompts, fromObservation, resolves, playTable, playKeys,
    tvTable, commentKind, moveOf, whereText, tvScore,
    // its own pieces, for tests of how they are drawn
    nimmtCard, rowsView,
  });
})();
