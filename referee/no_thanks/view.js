// No Thanks!'s view on the web page (docs/rules.md §2), given by the game's spec
// (GameSpec.web_view) and served at /games/no_thanks/view.js: its replay turn by turn, its
// live table, a person's seat and the big screen. The page's helpers (h, table, tr, botLink,
// plainCard, ...) come from app.js; what the page does not find here it draws with its
// generic view.
"use strict";

(() => {
  /** A score: cards that extend a run count only as its lowest, minus chips. */
  function score(cards, chips) {
    const sorted = [...cards].sort((a, b) => a - b);
    let sum = 0;
    sorted.forEach((card, i) => { if (i === 0 || sorted[i - 1] !== card - 1) sum += card; });
    return sum - (chips || 0);
  }

  // -- the replay --------------------------------------------------------------------------

  /** The answers of a replay's log, attached to the turn each one led to (a "keep" of the
   * hidden card goes with the seat's next move). */
  function turnAnswers(replay) {
    const pending = (replay.events || []).filter((e) => e.type === "answer");
    let next = 0;
    return replay.rounds.map((round) => round.turns.map((turn) => {
      const found = [];
      while (next < pending.length) {
        const answer = pending[next++];
        found.push(answer);
        const ends = turn.action === "reveal_hidden"
          ? answer.kind === "REVEAL_HIDDEN_CARD" && answer.action === "reveal"
          : answer.kind === "TAKE_OR_PASS";
        if (ends) break;
      }
      return found;
    }));
  }

  function replaySteps(replay) {
    const seats = replay.seats.length;
    const answers = turnAnswers(replay);
    const steps = [];
    let before = new Array(seats).fill(0);
    replay.rounds.forEach((round, r) => {
      const chips = new Array(seats).fill(round.chips_start);
      const cards = Array.from({length: seats}, () => []);
      const revealed = new Array(seats).fill(false);
      let pot = 0;
      const snapshot = (turn, card, said) => ({
        round: r, turn, card, pot, chips: [...chips], cards: cards.map((c) => [...c]),
        revealed: [...revealed], answers: said || [],
        scores: cards.map((c, s) => score(c, chips[s])),
        totals: before.map((b, s) => b + score(cards[s], chips[s])),
      });
      steps.push(snapshot(null, null));
      round.turns.forEach((turn, t) => {
        let card = turn.card;
        if (turn.action === "pass") { chips[turn.seat] -= 1; pot = turn.pot + 1; }
        else if (turn.action === "take") {
          chips[turn.seat] += turn.pot; cards[turn.seat].push(turn.card); pot = 0; card = null;
        } else if (turn.action === "reveal_hidden") {
          cards[turn.seat].push(turn.card); revealed[turn.seat] = true; card = null;
        }
        steps.push(snapshot(turn, card, answers[r][t]));
      });
      before = before.map((b, s) => b + round.scores[s]);
    });
    return steps;
  }

  function replayStep(step, names, replay, bots) {
    const rounds = replay.rounds.length;
    const round = replay.rounds[step.round];
    let what = "The round begins.";
    if (step.turn) {
      const who = names[step.turn.seat];
      what = step.turn.action === "pass" ? `${who} passed on ${step.turn.card}, paying a chip.`
        : step.turn.action === "take" ? `${who} took ${step.turn.card} and ${step.turn.pot} chips.`
        : `${who} revealed the hidden card ${step.turn.card}.`;
    }
    const bySeat = {};
    for (const answer of step.answers) {  // the move that made the turn, or a default on the way
      if (!(bySeat[answer.seat] && bySeat[answer.seat].default)) bySeat[answer.seat] = answer;
    }
    const banked = bankOf(replay) > 0;
    const cols = [["Seat"], ["Cards"], ["Chips", "num"], ["Score this round", "num"],
                  ["Running total", "num"], ["Hidden card"], ["Answer"],
                  ...(banked ? [["Bank left", "num"]] : [])];
    return h("div", {},
      h("p", {class: "big", "data-testid": "where"},
        `Round ${step.round + 1} of ${rounds} · turn ${step.turn ? round.turns.indexOf(step.turn) + 1
                                                            : 0} of ${round.turns.length}`),
      h("p", {"data-testid": "what"}, what),
      h("div", {class: "toolbar"}, "Card: ",
        h("span", {"data-testid": "card"}, step.card ? plainCard(step.card) : "—"),
        " Pot: ", h("strong", {"data-testid": "pot"}, step.card ? step.pot : 0), " chips"),
      h("h2", {}, "Seats"), table("Seats", cols,
        names.map((name, s) => tr({"data-seat": s}, cols, [
          botLink(name, bots[s], replay.seats[s].human),
          cardList([...step.cards[s]].sort((a, b) => a - b), plainCard),
          step.chips[s], step.scores[s],
          {attrs: {"data-testid": "total"}, content: step.totals[s]},
          round.hidden ? `${round.hidden[s]}${step.revealed[s] ? " (revealed)" : " (face down)"}`
                       : "—",
          bySeat[s] ? answerNote(bySeat[s]) : "",
          ...(banked ? [bankCell(step, s)] : [])])), {"data-testid": "seats"}));
  }

  // -- a live match ------------------------------------------------------------------------

  function liveState(state) {
    Object.assign(state, {card: null, pot: 0, deckLeft: null,
                          cards: state.names.map(() => []), scores: null});
  }

  function applyPublic(state, event) {
    const d = event.data;
    const names = state.names;
    switch (event.type) {
      case "RoundStarted":
        state.round = d.round;
        state.cards = state.cards.map(() => []); state.card = null; state.pot = 0;
        state.log.push(`Round ${d.round + 1} starts.`);
        break;
      case "CardTurnedUp":
        state.card = d.card; state.pot = 0; state.deckLeft = d.deck_left;
        state.log.push(`${d.card} is turned up (${d.deck_left} left in the deck).`);
        break;
      case "Passed":
        state.pot = d.pot; state.log.push(`${names[d.seat]} passed on ${d.card}.`);
        break;
      case "Took":
        state.cards[d.seat].push(d.card); state.card = null; state.pot = 0;
        state.log.push(`${names[d.seat]} took ${d.card} with ${d.pot} chips.`);
        break;
      case "HiddenRevealed":
        state.cards[d.seat].push(d.card);
        state.log.push(`${names[d.seat]} revealed a hidden ${d.card}.`);
        break;
      case "RoundEnded":
        state.totals = d.totals; state.scores = d.scores;
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
    const cols = [["Seat"], ["Cards"], ["Total of finished rounds", "num"]];
    return h("div", {},
      h("p", {class: "big", "data-testid": "where"}, `Round ${state.round + 1}`),
      h("div", {class: "toolbar"}, "Card: ",
        h("span", {"data-testid": "card"}, state.card ? plainCard(state.card) : "—"),
        " Pot: ", h("strong", {"data-testid": "pot"}, state.pot), " chips · deck: ",
        state.deckLeft === null ? "—" : state.deckLeft),
      h("h2", {}, "Seats"), table("Seats", cols,
        state.names.map((name, s) => tr({"data-seat": s}, cols, [
          botLink(name, state.bots[s], state.humans.includes(s)),
          cardList([...state.cards[s]].sort((a, b) => a - b), plainCard),
          {attrs: {"data-testid": "total"}, content: state.totals[s]}])), {"data-testid": "seats"}));
  }

  // -- a person's seat (play.js) -----------------------------------------------------------

  const prompts = {
    DECISION_KIND_TAKE_OR_PASS: "Take the card and its chips (T), or pass with a chip (P).",
    DECISION_KIND_REVEAL_HIDDEN_CARD: "Reveal your hidden card (R), or keep it face down (K).",
  };

  const WORDS = {take: "took the card", pass: "passed", reveal: "revealed your hidden card",
                 keep: "kept your hidden card"};

  function fromObservation(pub, obs) {
    pub.round = obs.round;
    pub.totals = obs.totals;
    pub.card = obs.card || null;
    pub.pot = obs.pot;
    pub.deckLeft = obs.deck_left;
    pub.cards = obs.cards.map((c) => c.cards);
  }

  /** What ``event`` did for the seat's decision, if it settles it: {done, same}. */
  function resolves(event, decision, choice, seat) {
    const d = event.data;
    if ((event.type === "Passed" || event.type === "Took") && d.seat === seat) {
      return {done: event.type === "Passed" ? `passed on ${d.card}` : `took ${d.card}`,
              same: choice.word === (event.type === "Passed" ? "pass" : "take")};
    }
    if (event.type === "HiddenRevealed" && d.seat === seat) {
      return {done: `revealed your hidden card ${d.card}`, same: choice.word === "reveal"};
    }
    return null;
  }

  function wordButton(word, label, key, seat) {
    const legal = seat.legalSet(seat.play.decision);
    return h("button", {"data-word": word, "aria-keyshortcuts": key,
                        disabled: !(seat.waiting() && legal.has(word)),
                        onclick: () => seat.answer({word}, WORDS[word])}, label);
  }

  function playTable(seat) {
    const play = seat.play, pub = play.pub, obs = play.obs;
    const cols = [["Seat"], ["Cards"], ["Total of finished rounds", "num"]];
    return [
      h("p", {class: "muted", "data-testid": "where"}, `Round ${pub.round + 1}`),
      h("div", {class: "toolbar big"}, "Card: ",
        h("span", {"data-testid": "nt-card"}, pub.card ? plainCard(pub.card) : "—"),
        " Pot: ", h("span", {"data-testid": "pot"}, String(pub.pot)), " chips"),
      h("p", {}, "Your chips: ", h("strong", {"data-testid": "chips"},
        obs ? String(obs.chips) : "—"),
        obs && obs.hidden_card ? [" · your hidden card: ", plainCard(obs.hidden_card)] : "",
        pub.deckLeft === null ? "" : ` · ${pub.deckLeft} cards left in the deck`),
      h("div", {class: "toolbar", "data-testid": "words"},
        wordButton("take", "Take (T)", "t", seat), wordButton("pass", "Pass (P)", "p", seat),
        obs && obs.hidden_card ? [wordButton("reveal", "Reveal hidden card (R)", "r", seat),
                                  wordButton("keep", "Keep it hidden (K)", "k", seat)] : null),
      h("h2", {}, "Seats"), seat.seatsTable(cols, (name, s) => [
        s === play.seat ? h("strong", {}, "you") : name,
        cardList([...pub.cards[s]].sort((a, b) => a - b), plainCard),
        {attrs: {"data-testid": "total"}, content: pub.totals[s]}])];
  }

  /** Keys: T, P, R, K take, pass, reveal or keep. */
  function playKeys(e, seat) {
    const kind = seat.play.decision.kind;
    if (kind !== "DECISION_KIND_TAKE_OR_PASS" && kind !== "DECISION_KIND_REVEAL_HIDDEN_CARD") {
      return;
    }
    const word = {t: "take", p: "pass", r: "reveal", k: "keep"}[e.key.toLowerCase()];
    if (word && seat.legalSet(seat.play.decision).has(word)) seat.answer({word}, WORDS[word]);
  }

  // -- the big screen (tv.js) --------------------------------------------------------------

  /** The table: the card on offer, the chips on it, each seat's cards (chip counts stay
   * secret: they are in no public event). */
  function tvTable(match, kit) {
    const offer = h("div", {class: "offer-card", "data-testid": "tv-offer"});
    const pot = h("span", {class: "pot-count", "data-testid": "tv-pot"}, "0");
    const chips = h("span", {class: "chips", "aria-hidden": "true"});
    const deck = h("span", {"data-testid": "tv-deck"}, "—");
    const seats = match.seats.map((name, s) => h("li", {"data-seat": s},
      h("span", {class: "who"}, name), h("div", {class: "cards"}),
      h("q", {class: "said", "data-testid": "tv-comment"})));
    const root = h("div", {class: "table no-thanks"},
      h("div", {class: "offer"},
        h("div", {}, h("h3", {}, "On offer"), offer),
        h("div", {class: "pot"}, h("h3", {}, "Chips on it"),
          h("p", {class: "pot-line"}, pot, chips),
          h("p", {class: "deck"}, "Cards left in the deck: ", deck))),
      h("h3", {}, "Each seat's cards"),
      h("ol", {class: "seat-cards", "data-testid": "tv-seat-cards"}, seats));
    function draw(state) {
      kit.syncCards(offer, state.card ? [state.card] : [], "no_thanks");
      const count = state.card ? state.pot : 0;
      pot.textContent = String(count);
      chips.textContent = "●".repeat(Math.min(count, 40));
      deck.textContent = state.deckLeft === null ? "—" : String(state.deckLeft);
      seats.forEach((li, s) => kit.syncCards(li.querySelector(".cards"),
        [...state.cards[s]].sort((a, b) => a - b), "no_thanks"));
    }
    return {root, draw, say: kit.sayIn(seats)};
  }

  /** Which move of the feed an answer of the replay's log comments on: a turn, or a hidden
   * card revealed. */
  function commentKind(answer) {
    if (answer.kind === "TAKE_OR_PASS") return {kind: "Turn", byStep: false};
    if (answer.kind === "REVEAL_HIDDEN_CARD" && answer.action === "reveal") {
      return {kind: "HiddenRevealed", byStep: false};
    }
    return null;  // a hidden card kept: no move shown
  }

  function moveOf(event) {
    switch (event.type) {
      case "Passed": case "Took": return {kind: "Turn", clear: false, seat: event.data.seat};
      case "HiddenRevealed":
        return {kind: "HiddenRevealed", clear: false, seat: event.data.seat};
      case "RoundStarted": return {kind: null, clear: true};
      default: return null;
    }
  }

  function whereText(state, event, roundOpen) {
    const round = `Round ${state.round + 1}`;
    switch (event.type) {
      case "RoundStarted": return `${round}: the deal`;
      case "CardTurnedUp": return `${round}: ${state.card} is turned up`;
      case "Passed": return `${round}: ${state.names[event.data.seat]} passes`;
      case "Took": return `${round}: ${state.names[event.data.seat]} takes ${event.data.card}`;
      case "HiddenRevealed":
        return `${round}: ${state.names[event.data.seat]} reveals a hidden ${event.data.card}`;
      case "RoundEnded": return `${round} is over`;
      case "GameEnded": return "The game is over";
      default: return roundOpen ? round : "";
    }
  }

  /** A seat on the scoreboard: its total of finished rounds, and this round's cards. */
  function tvScore(state, s, roundOpen) {
    const thisRound = roundOpen ? score(state.cards[s], 0) : 0;
    return {running: state.totals[s], sub: `${thisRound} in cards this round (chips unseen)`};
  }

  registerGameView("no_thanks", {
    replaySteps, replayStep, liveState, applyPublic, live,
    prompts, fromObservation, resolves, playTable, playKeys,
    tvTable, commentKind, moveOf, whereText, tvScore,
  });
})();
