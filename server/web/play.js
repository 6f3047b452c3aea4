// The play page: a person plays one seat of a match in the browser. It is an HTTP bot
// (docs/http.md, "Playing a seat over HTTP"): it long-polls /api/play/poll and answers with
// /api/play/answer, carrying the seat token, so the referee applies the same deadline and
// default actions as to any bot. The token comes in the address's fragment (#TOKEN), which a
// browser never sends to a server; the page keeps it in this tab's session storage and takes
// it out of the address bar at once. It shows only what the seat receives: its own hand (or
// chips and hidden card) and the public events. Helpers (h, nimmtCard, applyPublic, ...)
// come from app.js.
"use strict";

const POLL_WAIT_MS = 20000;      // how long one long-poll waits for a message
const RETRY_MS = 1000;           // after a network error, poll again this much later
const KINDS = {
  DECISION_KIND_PLAY_CARD: "Play a card: click it, or pick it with ← → and press Enter.",
  DECISION_KIND_CHOOSE_ROW: "Your card is lower than every row: choose the row you take " +
                            "(click it, or press 1–4).",
  DECISION_KIND_DRAFT_CARD: "Draft a card from the pool.",
  DECISION_KIND_TAKE_OR_PASS: "Take the card and its chips (T), or pass with a chip (P).",
  DECISION_KIND_REVEAL_HIDDEN_CARD: "Reveal your hidden card (R), or keep it face down (K).",
};

let focusWanted = false;  // move the focus to the choices once they are drawn

const play = {
  matchId: decodeURIComponent(location.pathname.split("/")[2] || ""),
  token: "",
  seat: null, names: [], game: null, rated: false, deadlineMs: 0, bankMs: 0,
  pub: null,              // the public state, rebuilt from public events (app.js liveState)
  obs: null,              // the last observation this seat received (its own view)
  decision: null,         // the decision waiting for this seat, if any
  receivedAt: 0,          // when it arrived (performance.now())
  sent: null,             // the decision id of an answer on its way or accepted
  choice: null,           // that answer's action
  accepted: null,         // the decision id of the accepted answer
  answered: null,         // what that answer was, in words
  notice: null,           // a message about the last decision (a default, a rejection)
  ended: null, closed: null, error: null,
};

// -- the seat token ----------------------------------------------------------------------

function takeToken() {
  const key = `bullring-seat:${play.matchId}`;
  const given = location.hash.slice(1);
  if (given) {
    sessionStorage.setItem(key, given);
    history.replaceState(null, "", location.pathname + location.search);
  }
  return given || sessionStorage.getItem(key) || "";
}

function auth(extra) {
  return {Authorization: `Bearer ${play.token}`, Accept: "application/json", ...(extra || {})};
}

// -- talking to the referee --------------------------------------------------------------

async function pollLoop() {
  let after = null;
  while (!play.ended && !play.closed) {
    const query = `wait_ms=${POLL_WAIT_MS}${after === null ? "" : `&after=${after}`}`;
    let response, body;
    try {
      response = await fetch(`/api/play/poll?${query}`, {headers: auth(), cache: "no-store"});
      body = await response.json();
    } catch (err) {
      play.error = `Lost the connection (${err.message}); trying again…`;
      draw();
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      continue;
    }
    if (!response.ok) {
      play.error = body.error ? body.error.message : `HTTP ${response.status}`;
      play.closed = body.error && body.error.code === "match_over"
        ? "This match is over." : "This seat cannot be played from here.";
      draw();
      return;
    }
    play.error = null;
    for (const message of body.messages) {
      after = message.seq;
      receive(message);
    }
    if (body.closed && !play.ended && !play.closed) {
      play.closed = "This seat is being played from another window or tab now.";
    }
    draw();
  }
}

async function answer(action, words) {
  const decision = play.decision;
  if (!decision || play.sent === decision.decision_id) return;
  play.sent = decision.decision_id;
  play.choice = action;
  play.answered = words;
  play.notice = null;
  draw();
  let verdict;
  try {
    const response = await fetch("/api/play/answer", {
      method: "POST", headers: auth({"Content-Type": "application/json"}),
      body: JSON.stringify({decision_id: decision.decision_id, action})});
    verdict = await response.json();
  } catch (err) {
    verdict = {rejected: {message: `not sent: ${err.message}`}};
  }
  if (verdict.accepted) {
    if (play.decision && play.decision.decision_id === decision.decision_id) {
      play.accepted = decision.decision_id;
    }
  } else if (play.decision && play.decision.decision_id === decision.decision_id) {
    const why = verdict.rejected ? verdict.rejected.message
      : verdict.error ? verdict.error.message : "no verdict";
    play.sent = null;
    play.notice = {kind: "error", text: `Not accepted: ${why}`};
  }
  draw();
}

// -- what arrives ------------------------------------------------------------------------

function receive(message) {
  if (message.match_started) {
    const started = message.match_started;
    play.seat = started.seat;
    play.game = started.game;
    play.names = started.seat_names;
    play.rated = started.rated;
    play.deadlineMs = started.settings.deadline_ms;
    play.bankMs = started.settings.time_bank_ms || 0;
    const shown = play.names.map((name, s) => (s === play.seat ? "you" : name));
    play.pub = liveState({game: play.game, seats: shown, bots: []});
  } else if (message.decision) {
    if (play.decision && play.accepted !== play.decision.decision_id &&
        play.sent !== play.decision.decision_id) {
      defaulted(null);  // a decision replaced by the next one was answered for this seat
    }
    play.decision = message.decision;
    play.receivedAt = performance.now();
    play.sent = null;
    play.accepted = null;
    play.choice = null;
    focusWanted = true;
    play.obs = message.decision.six_nimmt || message.decision.no_thanks;
    fromObservation();
    announce(KINDS[play.decision.kind] || "Your turn.");
  } else if (message.event && play.pub) {
    const event = typedEvent(message.event);
    resolves(event);
    applyPublic(play.pub, event);
  } else if (message.match_ended) {
    play.ended = message.match_ended;
    play.decision = null;
    sessionStorage.removeItem(`bullring-seat:${play.matchId}`);
    announce("The match is over.");
  } else if (message.closed && !play.ended) {
    play.closed = message.closed.message || "This connection was ended by the server.";
  }
}

/** The observation's facts over the public state (a page opened mid-match has missed the
 * events before it). */
function fromObservation() {
  const obs = play.obs, pub = play.pub;
  if (!obs || !pub) return;
  pub.round = obs.round;
  pub.totals = obs.totals;
  if (play.game === "six_nimmt") {
    pub.rows = obs.rows.map((r) => r.cards);
    pub.penalties = obs.penalties;
  } else {
    pub.card = obs.card || null;
    pub.pot = obs.pot;
    pub.deckLeft = obs.deck_left;
    pub.cards = obs.cards.map((c) => c.cards);
  }
}

/** If ``event`` settles this seat's decision, note whether the referee answered for it. */
function resolves(event) {
  const decision = play.decision;
  if (!decision) return;
  const d = event.data;
  const kind = decision.kind;
  const choice = play.sent === decision.decision_id ? play.choice || {} : {};
  let done = null, same = false;
  if (event.type === "CardsRevealed" && kind === "DECISION_KIND_PLAY_CARD") {
    done = `played ${d.plays[play.seat]}`;
    same = choice.card === d.plays[play.seat];
  } else if (event.type === "TrickResolved" && kind === "DECISION_KIND_CHOOSE_ROW" &&
             d.row_choice && d.row_choice.seat === play.seat) {
    done = `chose row ${d.row_choice.row + 1}`;
    same = choice.row === d.row_choice.row;
  } else if (event.type === "CardDrafted" && kind === "DECISION_KIND_DRAFT_CARD" &&
             d.seat === play.seat) {
    done = `drafted ${d.card}`;
    same = choice.card === d.card;
  } else if ((event.type === "Passed" || event.type === "Took") && d.seat === play.seat) {
    done = event.type === "Passed" ? `passed on ${d.card}` : `took ${d.card}`;
    same = choice.word === (event.type === "Passed" ? "pass" : "take");
  } else if (event.type === "HiddenRevealed" && d.seat === play.seat) {
    done = `revealed your hidden card ${d.card}`;
    same = choice.word === "reveal";
  }
  if (done === null) return;
  // The verdict of an answer may come after the event it led to: an answer on its way that
  // matches what was played is this seat's own.
  if (play.accepted === decision.decision_id || same) {
    play.notice = {kind: "done", text: `You ${done}.`};
  } else {
    defaulted(done);
  }
  play.decision = null;
}

function defaulted(what) {
  const text = what ? `Time ran out: the referee ${what} for you (its default action).`
    : "Time ran out: the referee answered for you (its default action).";
  play.notice = {kind: "default", text};
  play.decision = null;
  announce(text);
}

// -- drawing -----------------------------------------------------------------------------

function legalSet(decision) {
  const legal = new Set();
  for (const action of (decision && decision.legal) || []) {
    legal.add(action.card !== undefined ? action.card
      : action.row !== undefined ? `row${action.row}` : action.word);
  }
  return legal;
}

function waiting() {
  return play.decision && play.sent !== play.decision.decision_id;
}

function secondsLeft() {
  if (!play.decision) return null;
  const gone = performance.now() - play.receivedAt;
  return Math.max(0, play.decision.time_left_ms - gone) / 1000;
}

/** The time left counts the seat's time bank (docs/rules.md §3): the decision's own
 * seconds first, then the bank's. */
function clockText() {
  const left = secondsLeft();
  if (left === null) return "—";
  const bank = play.bankMs ? Math.max(0, play.decision.time_left_ms - play.deadlineMs) / 1000
                           : 0;
  if (left > bank || !bank) return `${(left - bank).toFixed(1)} s`;
  return `0.0 s · time bank: ${left.toFixed(1)} s left`;
}

function seconds(ms) { return (ms / 1000).toFixed(ms % 1000 ? 1 : 0); }

function tickClock() {
  const clock = document.querySelector("[data-testid=clock]");
  if (!clock) return;
  const left = secondsLeft();
  clock.textContent = clockText();
  clock.classList.toggle("low", left !== null && left < 5);
}

function statusPanel() {
  let prompt;
  if (play.closed) prompt = play.closed;
  else if (!play.pub) prompt = "Joining your seat…";
  else if (play.decision && play.sent === play.decision.decision_id) {
    prompt = play.accepted === play.decision.decision_id
      ? `You ${play.answered}. Waiting for the others…` : `Sending: ${play.answered}…`;
  } else if (play.decision) prompt = KINDS[play.decision.kind] || "Your turn.";
  else prompt = "Waiting for the others…";
  const notice = play.notice ? h("p", {class: `notice ${play.notice.kind}`, "data-testid":
    play.notice.kind === "default" ? "defaulted" : "notice"}, play.notice.text) : null;
  return h("section", {class: "panel turn", "aria-label": "your turn", "data-testid": "status"},
    h("p", {class: "big", "data-testid": "prompt"}, prompt),
    h("p", {}, "Time left: ", h("span", {class: "clock", role: "timer", "data-testid": "clock",
      "aria-live": "off"}, clockText()),
      ` of ${seconds(play.deadlineMs)} s for each decision`,
      play.bankMs ? `, and a time bank of ${seconds(play.bankMs)} s for the match` : ""),
    notice, play.error ? h("p", {class: "error"}, play.error) : null);
}

function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

function rowButtons(rows) {
  const legal = legalSet(play.decision);
  const choosing = waiting() && play.decision.kind === "DECISION_KIND_CHOOSE_ROW";
  return h("div", {class: "rows", "data-testid": "rows"}, rows.map((row, i) => {
    const cards = h("span", {class: "cards"}, row.map((c) => nimmtCard(c)));
    if (!choosing) {
      return h("div", {class: "row", "data-row": i}, h("span", {class: "label"}, `row ${i + 1}`),
               cards);
    }
    return h("button", {class: "row pick", "data-row": i, "data-testid": "row-button",
                        disabled: !legal.has(`row${i}`),
                        onclick: () => answer({row: i}, `chose row ${i + 1}`)},
      h("span", {class: "label"}, `row ${i + 1}`), cards,
      h("span", {class: "mark"}, `take ${plural(row.length, "card")} · ` +
                                 plural(heads(row), "bullhead")));
  }));
}

function handButtons(cards, kind) {
  const legal = legalSet(play.decision);
  const mine = waiting() && play.decision.kind === kind;
  return h("div", {class: "cards hand", "data-testid": kind === "DECISION_KIND_DRAFT_CARD"
                                                         ? "pool" : "hand",
                   onkeydown: arrowKeys},
    cards.length ? cards.map((card) => h("button", {
      class: `card-button${play.choice && play.choice.card === card && play.decision
                           ? " picked" : ""}`,
      "data-play": card, disabled: !(mine && legal.has(card)),
      onclick: () => answer({card}, `played ${card}`)}, nimmtCard(card)))
      : h("span", {class: "muted"}, "no cards"));
}

/** ← and → move between the enabled cards of the hand. */
function arrowKeys(e) {
  if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
  const buttons = [...e.currentTarget.querySelectorAll("button:not([disabled])")];
  const at = buttons.indexOf(document.activeElement);
  const next = buttons[at < 0 ? 0 : (at + (e.key === "ArrowRight" ? 1 : buttons.length - 1))
                       % buttons.length];
  if (next) { next.focus(); e.preventDefault(); }
}

function seatsTable(columns, cells) {
  return table("Seats", columns, play.pub.names.map((name, s) =>
    tr({"data-seat": s, class: s === play.seat ? "me" : null}, columns, cells(name, s))),
    {"data-testid": "seats"});
}

function sixNimmtTable() {
  const pub = play.pub, obs = play.obs;
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
    h("h2", {}, "The rows"), rowButtons(pub.rows),
    trickLine,
    h("h2", {}, "Your hand"), handButtons(hand, "DECISION_KIND_PLAY_CARD"),
    obs && obs.pool && obs.pool.length
      ? [h("h2", {}, "The draft pool"), handButtons(obs.pool, "DECISION_KIND_DRAFT_CARD")] : null,
    h("h2", {}, "Seats"), seatsTable(cols, (name, s) => [
      s === play.seat ? h("strong", {}, "you") : name,
      pub.plays ? nimmtCard(pub.plays[s]) : "",
      cardList(pub.taken ? pub.taken[s] : [], (c) => nimmtCard(c)),
      pub.penalties[s], {attrs: {"data-testid": "total"}, content: pub.totals[s]}])];
}

function wordButton(word, label, key) {
  const legal = legalSet(play.decision);
  return h("button", {"data-word": word, "aria-keyshortcuts": key,
                      disabled: !(waiting() && legal.has(word)),
                      onclick: () => answer({word}, WORDS[word])}, label);
}

const WORDS = {take: "took the card", pass: "passed", reveal: "revealed your hidden card",
               keep: "kept your hidden card"};

function noThanksTable() {
  const pub = play.pub, obs = play.obs;
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
      wordButton("take", "Take (T)", "t"), wordButton("pass", "Pass (P)", "p"),
      obs && obs.hidden_card ? [wordButton("reveal", "Reveal hidden card (R)", "r"),
                                wordButton("keep", "Keep it hidden (K)", "k")] : null),
    h("h2", {}, "Seats"), seatsTable(cols, (name, s) => [
      s === play.seat ? h("strong", {}, "you") : name,
      cardList([...pub.cards[s]].sort((a, b) => a - b), plainCard),
      {attrs: {"data-testid": "total"}, content: pub.totals[s]}])];
}

function resultPanel() {
  const end = play.ended;
  const over = end.termination === "TERMINATION_NORMAL" ? "finished" : "aborted";
  return h("section", {class: "panel", "data-testid": "result", "aria-label": "result"},
    h("p", {class: "big"}, `Match ${over}: you placed ${end.ranks[play.seat]} of `,
      `${end.ranks.length} with ${end.totals[play.seat]} points (lower is better).`),
    h("p", {}, "Totals: ", play.pub.names.map((name, s) =>
      `${name} ${end.totals[s]}`).join(" · "), ". ",
      h("a", {href: `/#/match/${encodeURIComponent(play.matchId)}`,
              "data-testid": "replay-link"}, "Watch the replay")));
}


function draw() {
  const view = document.getElementById("view");
  const title = h("h1", {}, `${gameName(play.game || "")} · match ${play.matchId}`,
    play.game && !play.rated ? h("span", {class: "muted", "data-testid": "unrated"},
                                 " unrated") : null);
  // Once the match is over, its result takes the place of the prompt, the clock and the
  // word on the last decision, which no longer hold.
  const parts = [title, play.ended ? resultPanel() : statusPanel()];
  if (play.pub) {
    parts.push(h("section", {class: "panel", "aria-label": "the table"},
      play.game === "six_nimmt" ? sixNimmtTable() : noThanksTable()));
    parts.push(h("section", {class: "panel", "aria-labelledby": "log-title"},
      h("h2", {id: "log-title"}, "What happened"),
      h("ul", {class: "log", "data-testid": "log", tabindex: 0, "aria-labelledby": "log-title"},
        play.pub.log.slice(-30).reverse().map((line) => h("li", {}, line)))));
  }
  const had = document.activeElement;
  const kept = had && had.dataset && (had.dataset.play || had.dataset.row || had.dataset.word);
  view.replaceChildren(...parts);
  const again = kept && view.querySelector(`[data-play="${had.dataset.play}"]:not([disabled]),` +
    `[data-row="${had.dataset.row}"]:not([disabled]),[data-word="${had.dataset.word}"]:not([disabled])`);
  if (again) again.focus();
  else if (waiting() && (focusWanted || kept)) {
    const first = view.querySelector(".hand button:not([disabled]), button.row.pick:not([disabled])," +
                                     "[data-testid=words] button:not([disabled])");
    if (first) first.focus({preventScroll: true});
  }
  focusWanted = false;
  document.body.dataset.state = play.ended ? "ended" : play.closed ? "closed"
    : waiting() ? "deciding" : "waiting";
  document.body.dataset.decision = waiting() ? play.decision.decision_id : "";
}

/** Keys: 1–4 choose a row; T, P, R, K take, pass, reveal or keep. */
function keys(e) {
  if (e.ctrlKey || e.metaKey || e.altKey || !waiting()) return;
  const kind = play.decision.kind;
  if (kind === "DECISION_KIND_CHOOSE_ROW" && /^[1-9]$/.test(e.key)) {
    const row = Number(e.key) - 1;
    if (legalSet(play.decision).has(`row${row}`)) answer({row}, `chose row ${row + 1}`);
  } else if (kind === "DECISION_KIND_TAKE_OR_PASS" || kind === "DECISION_KIND_REVEAL_HIDDEN_CARD") {
    const word = {t: "take", p: "pass", r: "reveal", k: "keep"}[e.key.toLowerCase()];
    if (word && legalSet(play.decision).has(word)) answer({word}, WORDS[word]);
  }
}

function start() {
  play.token = takeToken();
  if (!play.token) {
    document.getElementById("view").replaceChildren(h("h1", {}, "No seat here"),
      h("p", {class: "error", "data-testid": "no-token"}, "This address holds no seat token. " +
        "Open the full link you were given (it ends with #…), in the tab you were given it."));
    return;
  }
  document.addEventListener("keydown", keys);
  setInterval(tickClock, 100);
  draw();
  pollLoop();
}

start();
