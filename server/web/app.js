// Bullring's web page: leaderboard, match list, replay viewer and live spectating.
// Plain JavaScript with no build step; it only reads the public HTTP API.
"use strict";

// How often lists refresh by themselves: 5 s, or ?refresh=MS in the page's address.
const REFRESH_MS = Math.max(200, Number(new URLSearchParams(location.search).get("refresh"))
                                 || 5000);
let cleanup = [];  // what to stop when the view changes (timers, event sources)

// -- helpers -----------------------------------------------------------------------------

/** Create an element: h("td", {class: "num"}, "12"). Text is never parsed as HTML. */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

async function api(path) {
  const response = await fetch(path, {headers: {Accept: "application/json"}});
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ? `${body.error.code}: ${body.error.message}`
                                               : `HTTP ${response.status}`);
  return body;
}

function every(ms, fn) {
  fn();
  const timer = setInterval(fn, ms);
  cleanup.push(() => clearInterval(timer));
}

function clock() { return new Date().toLocaleTimeString(); }

/** 6 nimmt! bullheads of a card (docs/rules.md §1). */
function bullheads(card) {
  if (card === 55) return 7;
  if (card % 11 === 0) return 5;
  if (card % 10 === 0) return 3;
  if (card % 5 === 0) return 2;
  return 1;
}

function nimmtCard(card, isNew) {
  const heads = bullheads(card);
  return h("span", {class: `card b${heads}${isNew ? " new" : ""}`, "data-card": card},
           String(card), h("small", {title: `${heads} bullheads`}, "•".repeat(heads)));
}

function plainCard(card) {
  return h("span", {class: "card", "data-card": card}, String(card));
}

/** No Thanks! score: cards that extend a run count only as its lowest, minus chips. */
function noThanksScore(cards, chips) {
  const sorted = [...cards].sort((a, b) => a - b);
  let sum = 0;
  sorted.forEach((card, i) => { if (i === 0 || sorted[i - 1] !== card - 1) sum += card; });
  return sum - (chips || 0);
}

function statusTag(status) { return h("span", {class: `status ${status}`}, status); }

// -- home: leaderboard and matches -------------------------------------------------------

const home = {game: "six_nimmt", offset: 0, limit: 15, status: ""};

function renderHome(view) {
  const gamePick = h("select", {"data-testid": "game", "aria-label": "game", onchange: (e) => {
    home.game = e.target.value; home.offset = 0; refreshLeaderboard(); refreshMatches(); }},
    h("option", {value: "six_nimmt", selected: home.game === "six_nimmt"}, "6 nimmt!"),
    h("option", {value: "no_thanks", selected: home.game === "no_thanks"}, "No Thanks!"));
  const statusPick = h("select", {"data-testid": "status-filter", onchange: (e) => {
    home.status = e.target.value; home.offset = 0; refreshMatches(); }},
    ["", "running", "finished", "aborted", "created"].map((s) =>
      h("option", {value: s, selected: home.status === s}, s || "any status")));
  const board = h("section", {class: "panel", id: "leaderboard"},
    h("h2", {}, "Leaderboard"),
    h("div", {class: "toolbar"}, gamePick,
      h("span", {class: "muted", "data-testid": "leaderboard-updated"}, "")),
    h("table", {}, h("thead", {}, h("tr", {},
      h("th", {class: "num"}, "#"), h("th", {}, "Bot"), h("th", {class: "num"}, "Version"),
      h("th", {class: "num"}, "Games"), h("th", {class: "num"}, "Rating"),
      h("th", {class: "num", title: "mean ± 3 sigma"}, "Skill interval"))),
      h("tbody", {"data-testid": "leaderboard-rows"})));
  const matches = h("section", {class: "panel", id: "matches"},
    h("h2", {}, "Matches"),
    h("div", {class: "toolbar"}, statusPick,
      h("button", {"data-testid": "newer", onclick: () => {
        home.offset = Math.max(0, home.offset - home.limit); refreshMatches(); }}, "◀ newer"),
      h("button", {"data-testid": "older", onclick: () => {
        home.offset += home.limit; refreshMatches(); }}, "older ▶"),
      h("span", {class: "muted", "data-testid": "matches-page"}, "")),
    h("table", {}, h("thead", {}, h("tr", {},
      h("th", {}, "Match"), h("th", {}, "Game"), h("th", {}, "Status"), h("th", {}, "Seats"),
      h("th", {}, "Totals"), h("th", {}, "Created"))),
      h("tbody", {"data-testid": "match-rows"})));
  view.replaceChildren(h("h1", {}, "Bullring"), board, matches);
  every(REFRESH_MS, () => { refreshLeaderboard(); refreshMatches(); });
}

async function refreshLeaderboard() {
  const body = document.querySelector("[data-testid=leaderboard-rows]");
  if (!body) return;
  try {
    const board = await api(`/api/leaderboard?game=${encodeURIComponent(home.game)}`);
    body.replaceChildren(...(board.entries.length ? board.entries.map((e) =>
      h("tr", {"data-bot": e.bot},
        h("td", {class: "num"}, e.rank), h("td", {}, e.bot), h("td", {class: "num"}, e.version),
        h("td", {class: "num"}, e.games), h("td", {class: "num"}, e.ordinal.toFixed(2)),
        h("td", {class: "num"}, `${e.mu.toFixed(2)} ± ${(3 * e.sigma).toFixed(2)}`)))
      : [h("tr", {}, h("td", {colspan: 6, class: "muted"}, "No rated bots yet."))]));
    document.querySelector("[data-testid=leaderboard-updated]").textContent =
      `updated ${clock()}`;
  } catch (err) {
    body.replaceChildren(h("tr", {}, h("td", {colspan: 6, class: "error"}, String(err))));
  }
}

async function refreshMatches() {
  const body = document.querySelector("[data-testid=match-rows]");
  if (!body) return;
  const query = new URLSearchParams({game: home.game, limit: home.limit, offset: home.offset});
  if (home.status) query.set("status", home.status);
  try {
    const page = await api(`/api/matches?${query}`);
    body.replaceChildren(...(page.matches.length ? page.matches.map((m) =>
      h("tr", {"data-match": m.id},
        h("td", {}, h("a", {href: `#/match/${m.id}`}, m.id)),
        h("td", {}, m.game), h("td", {}, statusTag(m.status), m.live ? " live" : ""),
        h("td", {}, m.seats.join(", ")), h("td", {}, m.totals ? m.totals.join(" · ") : ""),
        h("td", {class: "muted"}, new Date(m.created_at).toLocaleString())))
      : [h("tr", {}, h("td", {colspan: 6, class: "muted"}, "No matches."))]));
    const last = Math.min(page.offset + page.limit, page.total);
    document.querySelector("[data-testid=matches-page]").textContent =
      page.total ? `${page.offset + 1}–${last} of ${page.total}` : "";
    document.querySelector("[data-testid=newer]").disabled = page.offset === 0;
    document.querySelector("[data-testid=older]").disabled = last >= page.total;
  } catch (err) {
    body.replaceChildren(h("tr", {}, h("td", {colspan: 6, class: "error"}, String(err))));
  }
}

// -- one match ---------------------------------------------------------------------------

async function renderMatch(view, matchId) {
  view.replaceChildren(h("p", {class: "muted"}, "Loading…"));
  let match;
  try {
    match = await api(`/api/matches/${encodeURIComponent(matchId)}`);
  } catch (err) {
    view.replaceChildren(h("p", {class: "error"}, String(err)));
    return;
  }
  const title = h("h1", {}, `${match.game === "six_nimmt" ? "6 nimmt!" : "No Thanks!"} · match `,
                  match.id, " ", statusTag(match.status));
  if (match.status === "finished" || match.status === "aborted") {
    const replay = await api(`/api/matches/${encodeURIComponent(matchId)}/replay`);
    view.replaceChildren(title, replayViewer(replay));
  } else if (match.live) {
    view.replaceChildren(title, liveView(match));
  } else {
    view.replaceChildren(title, h("p", {class: "muted", "data-testid": "waiting"},
      match.status === "created" ? "Waiting for the bots to join…"
                                 : "This match is not running on this server."));
    const timer = setTimeout(() => route(), 2000);
    cleanup.push(() => clearTimeout(timer));
  }
}

// -- replay viewer -----------------------------------------------------------------------

/** Every step of a replay, each with what the viewer shows at that point. */
function replaySteps(replay) {
  return replay.game === "six_nimmt" ? sixNimmtSteps(replay) : noThanksSteps(replay);
}

function sixNimmtSteps(replay) {
  const seats = replay.seats.length;
  const steps = [];
  let before = new Array(seats).fill(0);  // totals of finished rounds
  replay.rounds.forEach((round, r) => {
    const penalties = new Array(seats).fill(0);
    const piles = Array.from({length: seats}, () => []);
    steps.push({round: r, trick: null, rows: round.rows, draft: round.draft || null,
                penalties: [...penalties], piles: piles.map((p) => [...p]),
                totals: [...before]});
    let rows = round.rows;
    round.tricks.forEach((trick, t) => {
      trick.taken.forEach((cards, s) => {
        piles[s].push(...cards);
        penalties[s] += cards.reduce((sum, c) => sum + bullheads(c), 0);
      });
      steps.push({round: r, trick: t, rowsBefore: rows, rows: trick.rows_after,
                  plays: trick.plays, rowChoice: trick.row_choice, taken: trick.taken,
                  penalties: [...penalties], piles: piles.map((p) => [...p]),
                  totals: before.map((b, s) => b + penalties[s])});
      rows = trick.rows_after;
    });
    before = before.map((b, s) => b + round.penalties[s]);
  });
  return steps;
}

function noThanksSteps(replay) {
  const seats = replay.seats.length;
  const steps = [];
  let before = new Array(seats).fill(0);
  replay.rounds.forEach((round, r) => {
    const chips = new Array(seats).fill(round.chips_start);
    const cards = Array.from({length: seats}, () => []);
    let pot = 0;
    const snapshot = (turn, card) => ({
      round: r, turn, card, pot, chips: [...chips], cards: cards.map((c) => [...c]),
      scores: cards.map((c, s) => noThanksScore(c, chips[s])),
      totals: before.map((b, s) => b + noThanksScore(cards[s], chips[s])),
    });
    steps.push(snapshot(null, null));
    round.turns.forEach((turn) => {
      let card = turn.card;
      if (turn.action === "pass") { chips[turn.seat] -= 1; pot = turn.pot + 1; }
      else if (turn.action === "take") {
        chips[turn.seat] += turn.pot; cards[turn.seat].push(turn.card); pot = 0; card = null;
      } else if (turn.action === "reveal_hidden") { cards[turn.seat].push(turn.card); card = null; }
      steps.push(snapshot(turn, card));
    });
    before = before.map((b, s) => b + round.scores[s]);
  });
  return steps;
}

function replayViewer(replay) {
  const steps = replaySteps(replay);
  const names = replay.seats.map((s) => s.name);
  let index = 0;
  const stage = h("div", {"data-testid": "stage"});
  const label = h("span", {"data-testid": "step-label"});
  const slider = h("input", {type: "range", min: 0, max: steps.length - 1, value: 0,
                             "aria-label": "step", oninput: (e) => go(Number(e.target.value))});
  const buttons = {
    first: h("button", {"data-testid": "first", onclick: () => go(0)}, "« first"),
    prev: h("button", {"data-testid": "prev", onclick: () => go(index - 1)}, "◀ prev"),
    next: h("button", {"data-testid": "next", onclick: () => go(index + 1)}, "next ▶"),
    last: h("button", {"data-testid": "last", onclick: () => go(steps.length - 1)}, "last »"),
  };
  function go(i) {
    index = Math.max(0, Math.min(steps.length - 1, i));
    slider.value = index;
    buttons.first.disabled = buttons.prev.disabled = index === 0;
    buttons.next.disabled = buttons.last.disabled = index === steps.length - 1;
    const step = steps[index];
    label.textContent = `step ${index + 1} of ${steps.length}`;
    stage.replaceChildren(replay.game === "six_nimmt" ? sixNimmtStep(step, names, replay)
                                                      : noThanksStep(step, names, replay));
  }
  const keys = (e) => {
    if (e.key === "ArrowRight") go(index + 1);
    if (e.key === "ArrowLeft") go(index - 1);
  };
  document.addEventListener("keydown", keys);
  cleanup.push(() => document.removeEventListener("keydown", keys));
  const root = h("section", {class: "panel", "data-testid": "replay"},
    h("div", {class: "toolbar"}, buttons.first, buttons.prev, buttons.next, buttons.last, slider,
      label),
    stage,
    h("p", {class: "muted"}, `Final totals: ${replay.totals.join(" · ")} · ranks `,
      replay.ranks.join(" · "), ` · ${replay.termination} · seed ${replay.seed} · `,
      h("a", {href: `/api/matches/${replay.match_id}/replay`}, "replay JSON")));
  go(0);
  return root;
}

function rowsView(rows, chosen, fresh) {
  return h("div", {class: "rows", "data-testid": "rows"}, rows.map((row, i) =>
    h("div", {class: `row${chosen === i ? " chosen" : ""}`, "data-row": i},
      h("span", {class: "label"}, `row ${i + 1}`),
      h("span", {class: "cards"}, row.map((c) => nimmtCard(c, fresh && fresh.has(c)))))));
}

function seatTable(headers, rows) {
  return h("table", {"data-testid": "seats"},
    h("thead", {}, h("tr", {}, headers.map(([text, cls]) => h("th", {class: cls}, text)))),
    h("tbody", {}, rows));
}

function sixNimmtStep(step, names, replay) {
  const rounds = replay.rounds.length;
  const where = step.trick === null
    ? `Round ${step.round + 1} of ${rounds} · the deal: four starting rows`
    : `Round ${step.round + 1} of ${rounds} · trick ${step.trick + 1} of ` +
      `${replay.rounds[step.round].tricks.length}`;
  const parts = [h("p", {class: "big", "data-testid": "where"}, where)];
  if (step.trick === null) {
    parts.push(rowsView(step.rows, null, null));
    if (step.draft) parts.push(h("p", {class: "muted"}, "Draft: ",
      step.draft.map((d) => `${names[d.seat]} ${d.card}`).join(", ")));
  } else {
    const order = step.plays.map((card, seat) => ({card, seat})).sort((a, b) => a.card - b.card);
    parts.push(h("h2", {}, "Revealed, placed lowest first"),
      h("div", {class: "cards", "data-testid": "revealed"}, order.map(({card, seat}) =>
        h("span", {title: names[seat]}, nimmtCard(card), " ", h("span", {class: "muted"},
          names[seat])))));
    if (step.rowChoice) {
      parts.push(h("p", {"data-testid": "row-choice"}, `${names[step.rowChoice.seat]} played `,
        `the lowest card and chose row ${step.rowChoice.row + 1}.`));
    }
    parts.push(h("h2", {}, "Rows after the trick"),
      rowsView(step.rows, step.rowChoice ? step.rowChoice.row : null, new Set(step.plays)));
  }
  parts.push(h("h2", {}, "Seats"), seatTable(
    [["Seat"], ["Played"], ["Took this trick"], ["Bullheads this round", "num"],
     ["Running total", "num"]],
    names.map((name, s) => h("tr", {"data-seat": s},
      h("td", {}, name),
      h("td", {}, step.plays ? nimmtCard(step.plays[s]) : ""),
      h("td", {}, h("span", {class: "cards"},
        (step.taken ? step.taken[s] : []).map((c) => nimmtCard(c)))),
      h("td", {class: "num"}, step.penalties[s]),
      h("td", {class: "num", "data-testid": "total"}, step.totals[s])))));
  return h("div", {}, parts);
}

function noThanksStep(step, names, replay) {
  const rounds = replay.rounds.length;
  const round = replay.rounds[step.round];
  let what = "The round begins.";
  if (step.turn) {
    const who = names[step.turn.seat];
    what = step.turn.action === "pass" ? `${who} passed on ${step.turn.card}, paying a chip.`
      : step.turn.action === "take" ? `${who} took ${step.turn.card} and ${step.turn.pot} chips.`
      : `${who} revealed the hidden card ${step.turn.card}.`;
  }
  return h("div", {},
    h("p", {class: "big", "data-testid": "where"},
      `Round ${step.round + 1} of ${rounds} · turn ${step.turn ? round.turns.indexOf(step.turn) + 1
                                                          : 0} of ${round.turns.length}`),
    h("p", {"data-testid": "what"}, what),
    h("div", {class: "toolbar"}, "Card: ",
      h("span", {"data-testid": "card"}, step.card ? plainCard(step.card) : "—"),
      " Pot: ", h("strong", {"data-testid": "pot"}, step.card ? step.pot : 0), " chips"),
    h("h2", {}, "Seats"), seatTable(
      [["Seat"], ["Cards"], ["Chips", "num"], ["Score this round", "num"],
       ["Running total", "num"]],
      names.map((name, s) => h("tr", {"data-seat": s},
        h("td", {}, name),
        h("td", {}, h("span", {class: "cards"},
          [...step.cards[s]].sort((a, b) => a - b).map(plainCard))),
        h("td", {class: "num"}, step.chips[s]),
        h("td", {class: "num"}, step.scores[s]),
        h("td", {class: "num", "data-testid": "total"}, step.totals[s])))));
}

// -- live spectating ---------------------------------------------------------------------

/** The public state of a live match, rebuilt from its public events only. */
function liveState(match) {
  const seats = match.seats.length;
  return {game: match.game, names: match.seats, events: 0, round: 0, trick: 0,
          rows: [], plays: null, rowChoice: null, taken: null,
          penalties: new Array(seats).fill(0), totals: new Array(seats).fill(0),
          card: null, pot: 0, deckLeft: null, cards: Array.from({length: seats}, () => []),
          scores: null, log: [], ended: null};
}

function applyPublic(state, event) {
  const d = event.data;
  const names = state.names;
  state.events += 1;
  switch (event.type) {
    case "RoundStarted":
      state.round = d.round;
      if (state.game === "six_nimmt") {
        state.rows = d.rows; state.trick = 0; state.plays = null; state.taken = null;
        state.penalties = state.penalties.map(() => 0);
      } else {
        state.cards = state.cards.map(() => []); state.card = null; state.pot = 0;
      }
      state.log.push(`Round ${d.round + 1} starts.`);
      break;
    case "CardsRevealed":
      state.plays = d.plays; state.trick = d.trick; state.taken = null; state.rowChoice = null;
      state.log.push(`Trick ${d.trick + 1}: ${d.plays.map((c, s) => `${names[s]} ${c}`).join(", ")}.`);
      break;
    case "TrickResolved":
      state.plays = d.plays; state.trick = d.trick; state.rows = d.rows_after;
      state.rowChoice = d.row_choice; state.taken = d.taken;
      d.taken.forEach((cards, s) => {
        state.penalties[s] += cards.reduce((sum, c) => sum + bullheads(c), 0);
      });
      if (d.row_choice) state.log.push(`${names[d.row_choice[0]]} chose row ${d.row_choice[1] + 1}.`);
      break;
    case "CardDrafted":
      state.log.push(`${names[d.seat]} drafted ${d.card}.`);
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
      state.totals = d.totals; state.scores = d.scores || d.penalties;
      state.log.push(`Round ${d.round + 1} ends: ${d.totals.join(" · ")}.`);
      break;
    case "GameEnded":
      state.totals = d.totals;
      break;
    default:
      state.log.push(event.type);
  }
}

function liveView(match) {
  const state = liveState(match);
  const stage = h("div", {"data-testid": "live-stage"});
  const counter = h("span", {"data-testid": "live-count"}, "0");
  const banner = h("p", {"data-testid": "live-status"}, h("span", {class: "live-dot"}),
    "Live — public facts only (hands and chip counts stay secret). Events: ", counter);
  const root = h("section", {class: "panel", "data-testid": "live"}, banner, stage);
  let drawn = 0;
  const draw = () => {
    drawn = state.events;
    counter.textContent = String(state.events);
    stage.replaceChildren(state.game === "six_nimmt" ? liveSixNimmt(state) : liveNoThanks(state),
      h("h2", {}, "What happened"),
      h("ul", {class: "log", "data-testid": "live-log"},
        state.log.slice(-30).reverse().map((line) => h("li", {}, line))));
  };
  const source = new EventSource(`/api/matches/${encodeURIComponent(match.id)}/feed`);
  source.addEventListener("public", (message) => {
    applyPublic(state, JSON.parse(message.data));
    if (drawn !== state.events) requestAnimationFrame(() => { if (drawn !== state.events) draw(); });
  });
  source.addEventListener("end", (message) => {
    source.close();
    const end = JSON.parse(message.data);
    state.totals = end.totals;
    draw();
    banner.replaceChildren(h("strong", {"data-testid": "live-ended"},
      `Match over (${end.termination}): totals ${end.totals.join(" · ")}, ranks `,
      end.ranks.join(" · "), ". "), h("a", {href: `#/match/${match.id}`, onclick: () =>
        setTimeout(route, 0)}, "Watch the replay"));
  });
  cleanup.push(() => source.close());
  draw();
  return root;
}

function liveSixNimmt(state) {
  return h("div", {},
    h("p", {class: "big", "data-testid": "where"},
      `Round ${state.round + 1} · trick ${state.plays ? state.trick + 1 : "—"}`),
    h("h2", {}, "Rows"), rowsView(state.rows, state.rowChoice ? state.rowChoice[1] : null,
                                  state.plays ? new Set(state.plays) : null),
    h("h2", {}, "Seats"), seatTable(
      [["Seat"], ["Revealed"], ["Took"], ["Bullheads this round", "num"],
       ["Total of finished rounds", "num"]],
      state.names.map((name, s) => h("tr", {"data-seat": s},
        h("td", {}, name),
        h("td", {}, state.plays ? nimmtCard(state.plays[s]) : ""),
        h("td", {}, h("span", {class: "cards"},
          (state.taken ? state.taken[s] : []).map((c) => nimmtCard(c)))),
        h("td", {class: "num"}, state.penalties[s]),
        h("td", {class: "num", "data-testid": "total"}, state.totals[s])))));
}

function liveNoThanks(state) {
  return h("div", {},
    h("p", {class: "big", "data-testid": "where"}, `Round ${state.round + 1}`),
    h("div", {class: "toolbar"}, "Card: ",
      h("span", {"data-testid": "card"}, state.card ? plainCard(state.card) : "—"),
      " Pot: ", h("strong", {"data-testid": "pot"}, state.pot), " chips · deck: ",
      state.deckLeft === null ? "—" : state.deckLeft),
    h("h2", {}, "Seats"), seatTable(
      [["Seat"], ["Cards"], ["Total of finished rounds", "num"]],
      state.names.map((name, s) => h("tr", {"data-seat": s},
        h("td", {}, name),
        h("td", {}, h("span", {class: "cards"},
          [...state.cards[s]].sort((a, b) => a - b).map(plainCard))),
        h("td", {class: "num", "data-testid": "total"}, state.totals[s])))));
}

// -- routing -----------------------------------------------------------------------------

function route() {
  for (const stop of cleanup) stop();
  cleanup = [];
  const view = document.getElementById("view");
  const match = location.hash.match(/^#\/match\/([^/]+)$/);
  if (match) renderMatch(view, decodeURIComponent(match[1]));
  else renderHome(view);
}

window.addEventListener("hashchange", route);
route();
