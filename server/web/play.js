// The play page: a person plays one seat of a match in the browser. It is an HTTP bot
// (docs/http.md, "Playing a seat over HTTP"): it long-polls /api/play/poll and answers with
// /api/play/answer, carrying the seat token, so the referee applies the same deadline and
// default actions as to any bot. The token comes in the address's fragment (#TOKEN), which a
// browser never sends to a server; the page keeps it in this tab's session storage and takes
// it out of the address bar at once. It shows only what the seat receives: its own
// observation and the public events, drawn by the game's view (app.js viewOf: the game's own
// hooks, else the generic ones), which gets this page's means to answer (``seat`` below).
// Helpers (h, viewOf, applyPublic, ...) come from app.js.
"use strict";

const POLL_WAIT_MS = 20000;      // how long one long-poll waits for a message
const RETRY_MS = 1000;           // after a network error, poll again this much later

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
    play.obs = message.decision[play.game] || null;  // the field named after the game
    fromObservation();
    announce(promptFor(play.decision.kind));
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
  viewOf(play.game).fromObservation(pub, obs);
}

/** If ``event`` settles this seat's decision, note whether the referee answered for it. */
function resolves(event) {
  const decision = play.decision;
  if (!decision) return;
  const choice = play.sent === decision.decision_id ? play.choice || {} : {};
  const settled = viewOf(play.game).resolves(event, decision, choice, play.seat);
  if (!settled) return;
  const {done, same} = settled;
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
  } else if (play.decision) prompt = promptFor(play.decision.kind);
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

/** ← and → move between the enabled cards of the hand. */
function arrowKeys(e) {
  if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
  const buttons = [...e.currentTarget.querySelectorAll("button:not([disabled])")];
  const at = buttons.indexOf(document.activeElement);
  const next = buttons[at < 0 ? 0 : (at + (e.key === "ArrowRight" ? 1 : buttons.length - 1))
                       % buttons.length];
  if (next) { next.focus(); e.preventDefault(); }
}

/** The prompt for a decision of ``kind``: the game's view's words, else plain ones. */
function promptFor(kind) {
  return viewOf(play.game).prompts[kind] || "Your turn: choose one of your actions.";
}

function seatsTable(columns, cells) {
  return table("Seats", columns, play.pub.names.map((name, s) =>
    tr({"data-seat": s, class: s === play.seat ? "me" : null}, columns, cells(name, s))),
    {"data-testid": "seats"});
}

/** What this page gives a game's view to draw and answer a seat with (its playTable and
 * playKeys hooks): the seat's state, the answer to send, the legal actions, whether the
 * seat is to decide now, the seats' table and the hand's arrow keys. */
const seat = {play, answer, legalSet, waiting, seatsTable, arrowKeys};

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
      viewOf(play.game).playTable(seat)));
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
    const first = view.querySelector("button[data-play]:not([disabled])," +
      "button[data-row]:not([disabled]),button[data-word]:not([disabled])");
    if (first) first.focus({preventScroll: true});
  }
  focusWanted = false;
  document.body.dataset.state = play.ended ? "ended" : play.closed ? "closed"
    : waiting() ? "deciding" : "waiting";
  document.body.dataset.decision = waiting() ? play.decision.decision_id : "";
}

/** Keys: those of the game's view for its decisions (playKeys). */
function keys(e) {
  if (e.ctrlKey || e.metaKey || e.altKey || !waiting()) return;
  viewOf(play.game).playKeys(e, seat);
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
  // The seat's first messages are drawn by its game's view: it loads first.
  gamesReady.catch((err) => console.warn(`no list of games: ${err.message}`)).then(pollLoop);
}

start();
