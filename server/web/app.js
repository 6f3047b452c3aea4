// Bullring's web page: leaderboard, matches, a page per bot, the replay viewer, live
// spectating and the "play against the bots" buttons. Plain JavaScript with no build step;
// it reads the public HTTP API (the play page, play.js, reuses its helpers). It names no
// game: each game the server registers may give its own view (GET /api/games, each game's
// `view`, a script that calls registerGameView), and the page draws what a game's view does
// not give with its generic view of any game (GENERIC below).
"use strict";

// How often lists refresh by themselves: 5 s, or ?refresh=MS in the page's address.
const REFRESH_MS = Math.max(200, Number(new URLSearchParams(location.search).get("refresh"))
                                 || 5000);
const TURN_POLL_MS = 500;  // how often the live view asks whose turn it is
const GAMES = {};  // each game's title by id, in the server's order (GET /api/games)
const VIEWS = {};  // each game's own view by id, as its script registered it
let cleanup = [];  // what to stop when the view changes (timers, event sources, listeners)

/** Called once by a game's view script: the hooks of GENERIC it draws its own way. */
function registerGameView(game, view) { VIEWS[game] = view; }

/** How the page draws ``game``: its own view's hooks, the generic view's for the rest. */
function viewOf(game) { return {...GENERIC, ...(VIEWS[game] || {})}; }

/** The games and their own views, loaded once: every page waits for it before drawing. */
const gamesReady = (async () => {
  const games = await api("/api/games");
  for (const game of games) GAMES[game.id] = game.title;
  await Promise.all(games.filter((game) => game.view).map((game) => new Promise((resolve) => {
    const script = document.createElement("script");
    script.src = game.view;
    script.addEventListener("load", resolve);
    script.addEventListener("error", () => {  // drawn by the generic view instead
      console.warn(`the view of ${game.id} did not load: ${game.view}`);
      resolve();
    });
    document.head.append(script);
  })));
})();

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

/** An SVG element (h() for the chart). */
function svg(tag, attrs, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) el.setAttribute(key, String(value));
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) {
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
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

function listen(target, type, fn) {
  target.addEventListener(type, fn);
  cleanup.push(() => target.removeEventListener(type, fn));
}

function clock() { return new Date().toLocaleTimeString(); }

/** Say something short to screen readers (the page's one, narrow live region). */
function announce(text) {
  const region = document.getElementById("announce");
  if (region) region.textContent = text;
}

function srOnly(text) { return h("span", {class: "sr-only"}, text); }

/** A large card for the big screen (tv.js), as ``game`` draws its cards. */
function bigCard(card, game) { return viewOf(game).bigCard(card); }

function plainCard(card) {
  return h("span", {class: "card", "data-card": card}, String(card));
}

function cardList(cards, make) {
  return h("span", {class: "cards"}, cards.length ? cards.map((c) => make(c))
                                                  : h("span", {class: "muted"}, "none"));
}

function statusTag(status) {
  return h("span", {class: `status ${status}`, "data-testid": "status"}, status);
}

function gameName(game) { return GAMES[game] || game; }

function matchLink(id) {
  return h("a", {class: "match-id", href: `#/match/${encodeURIComponent(id)}`}, id);
}

/** A seat's name, linked to its bot's page when a registered bot plays it. */
function botLink(name, bot, human) {
  if (human) {  // a person's seat (docs/play-in-browser.md): never a bot's page
    return h("span", {class: "human", "data-testid": "human-seat"},
      name, h("span", {class: "muted"}, " (person)"));
  }
  if (!bot) return h("span", {}, name);
  return h("a", {href: `#/bot/${encodeURIComponent(bot)}`, "data-bot-link": bot}, name);
}

/** A table that stacks into labelled lines on a narrow screen. */
function table(label, headers, rows, attrs) {
  const {body, class: more, ...rest} = attrs || {};
  return h("table", {class: more ? `stack ${more}` : "stack", ...rest},
    h("caption", {class: "sr-only"}, label),
    h("thead", {}, h("tr", {}, headers.map(([text, cls]) =>
      h("th", {scope: "col", class: cls}, text)))),
    h("tbody", body ? {"data-testid": body} : {}, rows));
}

/** A row for table(): each cell gets its column's name (shown when stacked). */
function tr(attrs, headers, cells) {
  return h("tr", attrs, cells.map((cell, i) =>
    h("td", {class: headers[i][1], "data-label": headers[i][0], ...(cell && cell.attrs)},
      cell && cell.attrs ? cell.content : cell)));
}

function labelled(text, control) {
  return h("label", {class: "field"}, h("span", {}, text), control);
}

function formatMs(ms) {
  if (ms === undefined || ms === null) return "";
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

/** How a seat's answer went: its time, or a marked default action. */
function answerNote(answer) {
  if (!answer) return h("span", {class: "muted"}, "—");
  if (answer.default) {
    return h("span", {class: "default", "data-testid": "defaulted"},
             "⚠ default (", answer.why || "no answer", ")", bankNote(answer));
  }
  if (answer.ms === undefined) {
    return h("span", {}, h("span", {class: "muted"}, "house bot"), commentNote(answer));
  }
  return h("span", {}, h("span", {"data-testid": "answer-ms"}, formatMs(answer.ms)),
           bankNote(answer), commentNote(answer));
}

/** The bot's own words on its answer, if it gave any (docs/replay-format.md): untrusted
 * text, so only ever a text node. */
function commentNote(answer) {
  if (!answer.comment) return null;
  return h("q", {class: "comment", "data-testid": "comment"}, answer.comment);
}

/** What an answer (or the timeout before a default) spent of the seat's time bank, if
 * anything (docs/rules.md §3). */
function bankNote(answer) {
  if (!answer.bank_spent_ms) return null;
  return h("span", {class: "bank", "data-testid": "bank-spent"},
           ` · +${seconds(answer.bank_spent_ms)} s from the time bank`);
}

/** Milliseconds as seconds with one decimal. */
function seconds(ms) { return (ms / 1000).toFixed(1); }

// -- home: leaderboard and matches -------------------------------------------------------

const home = {game: "", offset: 0, limit: 15};  // game: the first one, once known

/** The match filters, kept in the page's address: #/?bot=a&game=b&status=c&since=d&until=e */
function filtersFromHash() {
  const query = location.hash.includes("?") ? location.hash.split("?")[1] : "";
  const params = new URLSearchParams(query);
  return {bot: params.get("bot") || "", game: params.get("game") || "",
          status: params.get("status") || "", since: params.get("since") || "",
          until: params.get("until") || ""};
}

function renderHome(view) {
  if (!home.game) home.game = Object.keys(GAMES)[0] || "";
  const filters = filtersFromHash();
  const setFilter = (key) => (e) => {
    filters[key] = e.target.value;
    home.offset = 0;
    const query = new URLSearchParams(Object.entries(filters).filter(([, v]) => v));
    history.replaceState(null, "", `#/${query.toString() ? "?" + query : ""}`);
    refreshMatches(filters);
  };
  const gamePick = h("select", {"data-testid": "game", onchange: (e) => {
    home.game = e.target.value; refreshLeaderboard(); }},
    Object.entries(GAMES).map(([id, title]) =>
      h("option", {value: id, selected: home.game === id}, title)));
  const botPick = h("select", {"data-testid": "bot-filter", onchange: setFilter("bot")},
    h("option", {value: ""}, "any bot"),
    filters.bot ? h("option", {value: filters.bot, selected: true}, filters.bot) : null);
  const filterGame = h("select", {"data-testid": "game-filter", onchange: setFilter("game")},
    h("option", {value: ""}, "any game"),
    Object.entries(GAMES).map(([id, title]) =>
      h("option", {value: id, selected: filters.game === id}, title)));
  const statusPick = h("select", {"data-testid": "status-filter", onchange: setFilter("status")},
    ["", "running", "finished", "aborted", "created"].map((s) =>
      h("option", {value: s, selected: filters.status === s}, s || "any status")));
  const since = h("input", {type: "date", "data-testid": "since", value: filters.since,
                            onchange: setFilter("since")});
  const until = h("input", {type: "date", "data-testid": "until", value: filters.until,
                            onchange: setFilter("until")});
  const board = h("section", {class: "panel", id: "leaderboard", "aria-labelledby": "lb-title"},
    h("h2", {id: "lb-title"}, "Leaderboard"),
    h("div", {class: "toolbar"}, labelled("Game", gamePick),
      h("span", {class: "muted", "data-testid": "leaderboard-updated"}, "")),
    table("Leaderboard", LEADERBOARD, [], {body: "leaderboard-rows", class: "board"}));
  const matches = h("section", {class: "panel", id: "matches", "aria-labelledby": "m-title"},
    h("h2", {id: "m-title"}, "Matches"),
    h("div", {class: "toolbar filters"}, labelled("Bot", botPick), labelled("Game", filterGame),
      labelled("Status", statusPick), labelled("From", since), labelled("Before", until)),
    h("div", {class: "toolbar"},
      h("button", {"data-testid": "newer", onclick: () => {
        home.offset = Math.max(0, home.offset - home.limit); refreshMatches(filters); }},
        "◀ newer"),
      h("button", {"data-testid": "older", onclick: () => {
        home.offset += home.limit; refreshMatches(filters); }}, "older ▶"),
      h("span", {class: "muted", "data-testid": "matches-page"}, "")),
    table("Matches", MATCH_COLUMNS, [], {body: "match-rows"}));
  view.replaceChildren(h("h1", {}, "Bullring"), board, playPanel(), matches);
  api("/api/bots").then((bots) => {
    for (const bot of bots) {
      if (bot.name !== filters.bot) botPick.append(h("option", {value: bot.name}, bot.name));
    }
  }).catch(() => {});
  every(REFRESH_MS, () => { refreshLeaderboard(); refreshMatches(filters); });
}

/** "Play against the bots": a match for the person at this page against three house bots,
 * unrated; the answer's link (with the seat token in its fragment) opens the play page. */
function playPanel() {
  const seconds = h("select", {"data-testid": "play-seconds"}, [10, 30, 60].map((n) =>
    h("option", {value: n, selected: n === 30}, `${n} s`)));
  const said = h("p", {class: "muted", "data-testid": "play-error", role: "status"}, "");
  const start = async (game) => {
    said.textContent = "Dealing…";
    try {
      const response = await fetch("/api/human-matches", {method: "POST",
        headers: {"Content-Type": "application/json", Accept: "application/json"},
        body: JSON.stringify({game, deadline_ms: Number(seconds.value) * 1000,
                              settings: quickPlay(game).settings})});
      const body = await response.json();
      if (!response.ok) throw new Error(body.error ? body.error.message : `HTTP ${response.status}`);
      location.assign(body.play);
    } catch (err) {
      said.textContent = String(err.message || err);
    }
  };
  return h("section", {class: "panel", id: "play", "aria-labelledby": "play-title"},
    h("h2", {id: "play-title"}, "Play against the bots"),
    h("p", {class: "muted"}, "Take a seat yourself against three house bots, under the same " +
      "deadline and default rules as a bot. Your matches are unrated."),
    h("div", {class: "toolbar"}, labelled("Time for each decision", seconds),
      Object.entries(GAMES).map(([game, title]) => h("button", {"data-testid": "play-button",
        "data-game": game, onclick: () => start(game)},
        `Play ${title}${quickPlay(game).note}`))),
    said);
}

/** The settings of a game's match from the play button, and a note on its label: a short
 * match where the game's view asks for one. */
function quickPlay(game) { return viewOf(game).quickPlay || {settings: {}, note: ""}; }

// The second word of each column's class places its cell on a phone (style.css, .board).
const LEADERBOARD = [["#", "num rank"], ["Bot", "bot"], ["Version", "num version"],
                     ["Games", "num games"], ["Rating", "num rating"],
                     ["Skill interval (μ ± 3σ)", "num interval"]];
const MATCH_COLUMNS = [["Match"], ["Game"], ["Status"], ["Seats"], ["Totals"], ["Created"]];

async function refreshLeaderboard() {
  const body = document.querySelector("[data-testid=leaderboard-rows]");
  if (!body) return;
  try {
    const board = await api(`/api/leaderboard?game=${encodeURIComponent(home.game)}`);
    body.replaceChildren(...(board.entries.length ? board.entries.map((e) =>
      tr({"data-bot": e.bot}, LEADERBOARD, [e.rank, botLink(e.bot, e.bot), e.version, e.games,
        e.ordinal.toFixed(2), `${e.mu.toFixed(2)} ± ${(3 * e.sigma).toFixed(2)}`]))
      : [h("tr", {}, h("td", {colspan: 6, class: "muted"}, "No rated bots yet."))]));
    document.querySelector("[data-testid=leaderboard-updated]").textContent =
      `updated ${clock()}`;
  } catch (err) {
    body.replaceChildren(h("tr", {}, h("td", {colspan: 6, class: "error"}, String(err))));
  }
}

function seatLinks(m) {
  const parts = [];
  m.seats.forEach((name, s) => {
    if (s) parts.push(", ");
    parts.push(botLink(name, m.bots && m.bots[s], (m.humans || []).includes(s)));
  });
  return h("span", {}, parts);
}

function matchRow(m) {
  return tr({"data-match": m.id}, MATCH_COLUMNS, [
    matchLink(m.id), gameName(m.game),
    h("span", {}, statusTag(m.status), m.live ? " live" : "", m.rated ? "" : " · unrated"),
    seatLinks(m), m.totals ? m.totals.join(" · ") : "",
    {attrs: {class: "muted"}, content: new Date(m.created_at).toLocaleString()}]);
}

/** A date input's day as the start of that day, local time, in ISO form. */
function dayStart(day) { return day ? new Date(`${day}T00:00:00`).toISOString() : ""; }

async function refreshMatches(filters) {
  const body = document.querySelector("[data-testid=match-rows]");
  if (!body) return;
  const query = new URLSearchParams({limit: home.limit, offset: home.offset});
  for (const key of ["bot", "game", "status"]) if (filters[key]) query.set(key, filters[key]);
  if (filters.since) query.set("since", dayStart(filters.since));
  if (filters.until) query.set("until", dayStart(filters.until));
  try {
    const page = await api(`/api/matches?${query}`);
    body.replaceChildren(...(page.matches.length ? page.matches.map(matchRow)
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

// -- a bot's page ------------------------------------------------------------------------

async function renderBot(view, name) {
  view.replaceChildren(h("p", {class: "muted"}, "Loading…"));
  let page;
  try {
    page = await api(`/api/bots/${encodeURIComponent(name)}`);
  } catch (err) {
    view.replaceChildren(h("h1", {}, name), h("p", {class: "error"}, String(err)));
    return;
  }
  const bot = page.bot;
  const facts = [bot.owner ? `owner ${bot.owner}` : null, `version ${bot.version}`,
                 bot.house ? `house bot (${bot.house})` : null,
                 bot.enabled ? null : "disabled"].filter(Boolean).join(" · ");
  const ratingCols = [["Game"], ["Place", "num"], ["Games", "num"], ["Rating", "num"],
                      ["Skill interval (μ ± 3σ)", "num"]];
  const h2hCols = [["Opponent"], ["Game"], ["Matches", "num"], ["Won", "num"],
                   ["Drawn", "num"], ["Lost", "num"]];
  const charts = Object.keys(GAMES).map((game) => {
    const points = page.history.filter((p) => p.game === game);
    return points.length ? h("section", {class: "panel", "aria-labelledby": `chart-${game}`},
      h("h2", {id: `chart-${game}`}, `Rating history · ${gameName(game)}`),
      ratingChart(bot.name, game, points)) : null;
  }).filter(Boolean);
  const recent = h("tbody", {"data-testid": "bot-matches"});
  view.replaceChildren(
    h("h1", {}, "Bot ", h("span", {"data-testid": "bot-name"}, bot.name)),
    h("p", {class: "muted"}, facts),
    h("section", {class: "panel", "aria-labelledby": "ratings-title"},
      h("h2", {id: "ratings-title"}, "Ratings"),
      page.ratings.length ? table("Ratings", ratingCols, page.ratings.map((r) =>
        tr({"data-game": r.game}, ratingCols, [gameName(r.game), r.rank, r.games,
          r.ordinal.toFixed(2), `${r.mu.toFixed(2)} ± ${(3 * r.sigma).toFixed(2)}`])))
        : h("p", {class: "muted"}, "Not rated yet.")),
    ...charts,
    h("section", {class: "panel", "aria-labelledby": "recent-title"},
      h("h2", {id: "recent-title"}, "Recent matches"),
      h("p", {}, h("a", {href: `#/?bot=${encodeURIComponent(bot.name)}`}, "All its matches")),
      h("table", {class: "stack"}, h("caption", {class: "sr-only"}, "Recent matches"),
        h("thead", {}, h("tr", {}, MATCH_COLUMNS.map(([t]) => h("th", {scope: "col"}, t)))),
        recent)),
    h("section", {class: "panel", "aria-labelledby": "h2h-title"},
      h("h2", {id: "h2h-title"}, "Head to head"),
      page.head_to_head.length ? table("Head to head", h2hCols, page.head_to_head.map((r) =>
        tr({"data-opponent": r.opponent}, h2hCols, [botLink(r.opponent, r.opponent),
          gameName(r.game), r.matches, r.wins, r.draws, r.losses]))
      , {"data-testid": "head-to-head"}) : h("p", {class: "muted"}, "No finished matches yet.")));
  every(REFRESH_MS, async () => {
    try {
      const matches = await api(`/api/matches?bot=${encodeURIComponent(bot.name)}&limit=10`);
      recent.replaceChildren(...(matches.matches.length ? matches.matches.map(matchRow)
        : [h("tr", {}, h("td", {colspan: 6, class: "muted"}, "No matches."))]));
    } catch (err) {
      recent.replaceChildren(h("tr", {}, h("td", {colspan: 6, class: "error"}, String(err))));
    }
  });
}

/** The rating (mu - 3 sigma) after each rated match, drawn as an SVG line over the band
 * mu ± 3 sigma; the first point is the rating before the first match. */
function ratingChart(name, game, points) {
  const series = [{mu: points[0].mu_before, sigma: points[0].sigma_before},
                  ...points.map((p) => ({mu: p.mu, sigma: p.sigma}))];
  const W = 640, H = 240, left = 44, right = 12, top = 12, bottom = 28;
  const lows = series.map((p) => p.mu - 3 * p.sigma), highs = series.map((p) => p.mu + 3 * p.sigma);
  let min = Math.floor(Math.min(...lows)), max = Math.ceil(Math.max(...highs));
  if (max - min < 1) { min -= 1; max += 1; }
  const x = (i) => left + (series.length === 1 ? 0 : i * (W - left - right) / (series.length - 1));
  const y = (v) => top + (max - v) * (H - top - bottom) / (max - min);
  const line = (values) => values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const band = `${line(highs)} ${lows.map((v, i) => [i, v]).reverse()
    .map(([i, v]) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ")}`;
  const ticks = [min, (min + max) / 2, max];
  const first = lows[0], last = lows[lows.length - 1];
  const summary = `${name}'s rating at ${gameName(game)} over ${points.length} rated ` +
    `match${points.length > 1 ? "es" : ""}: from ${first.toFixed(2)} to ${last.toFixed(2)}` +
    ` (mean ${series[series.length - 1].mu.toFixed(2)} ± ${(3 * series[series.length - 1].sigma).toFixed(2)}).`;
  return h("figure", {class: "chart"},
    svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": summary,
                "data-testid": "rating-chart", "data-game": game},
      ticks.map((t) => svg("g", {},
        svg("line", {x1: left, x2: W - right, y1: y(t), y2: y(t), class: "grid"}),
        svg("text", {x: left - 6, y: y(t) + 4, "text-anchor": "end"}, t.toFixed(1)))),
      svg("polygon", {points: band, class: "band"}),
      svg("polyline", {points: line(series.map((p) => p.mu)), class: "mu"}),
      svg("polyline", {points: line(lows), class: "ordinal", "data-testid": "rating-line",
                       "data-points": series.length}),
      lows.map((v, i) => svg("circle", {cx: x(i), cy: y(v), r: 2.5, class: "dot"})),
      svg("text", {x: left, y: H - 8}, "before"),
      svg("text", {x: W - right, y: H - 8, "text-anchor": "end"},
          `after match ${points.length}`)),
    h("figcaption", {class: "muted"}, summary,
      " Solid line: the rating (μ − 3σ); dashed: the mean μ; shaded: μ ± 3σ."));
}

// -- one match ---------------------------------------------------------------------------

async function renderMatch(view, matchId, step) {
  view.replaceChildren(h("p", {class: "muted"}, "Loading…"));
  let match;
  try {
    match = await api(`/api/matches/${encodeURIComponent(matchId)}`);
  } catch (err) {
    view.replaceChildren(h("p", {class: "error"}, String(err)));
    return;
  }
  const badge = h("span", {}, statusTag(match.status));
  const title = h("h1", {}, `${gameName(match.game)} · match `, match.id, " ", badge,
                  match.rated ? null : h("span", {class: "muted", "data-testid": "unrated"},
                                         " unrated"));
  const seats = h("p", {class: "muted"}, "Seats: ", seatLinks(match));
  if ((match.status === "finished" || match.status === "aborted") && match.totals) {
    let replay;
    try {
      replay = await api(`/api/matches/${encodeURIComponent(matchId)}/replay`);
    } catch (err) {
      view.replaceChildren(title, seats, h("p", {class: "error"}, String(err)));
      return;
    }
    view.replaceChildren(title, seats, replayViewer(replay, step, match.bots || []));
  } else if (match.status === "aborted") {
    view.replaceChildren(title, seats, h("p", {"data-testid": "no-replay"},
      "This match was aborted before it started: nobody played, so there is no replay."));
  } else if (match.live) {
    view.replaceChildren(title, seats, liveView(match, (status) => {
      badge.replaceChildren(statusTag(status));
      announce(`Match over: ${status}.`);
    }));
  } else {
    view.replaceChildren(title, seats, h("p", {class: "muted", "data-testid": "waiting"},
      match.status === "created" ? "Waiting for the bots to join…"
                                 : "This match is not running on this server."));
    const timer = setTimeout(() => route(), 2000);
    cleanup.push(() => clearTimeout(timer));
  }
}

// -- replay viewer -----------------------------------------------------------------------

/** Every step of a replay, each with what the viewer shows at that point. */
function replaySteps(replay) {
  const view = viewOf(replay.game);
  const steps = view.replaySteps(replay);
  const bank = replay.seats.map(() => bankOf(replay));
  for (const step of steps) {  // what is left of each seat's time bank after the step
    for (const answer of view.stepAnswers(step)) {
      if (answer && answer.bank_left_ms !== undefined) bank[answer.seat] = answer.bank_left_ms;
    }
    step.bank = [...bank];
  }
  return steps;
}

/** The match's time bank per seat (ms; 0 without one). */
function bankOf(replay) { return Number((replay.settings || {}).time_bank_ms || 0); }

/** ``replay`` with its time bank on the answers: a default after a timeout carries what the
 * timeout spent of the seat's bank and what is left (the log has them on the timeout). */
function withTimeBank(replay) {
  if (!bankOf(replay)) return replay;
  const timedOut = {};
  const events = (replay.events || []).map((event) => {
    if (event.type === "timeout") timedOut[event.seat] = event;
    if (event.type !== "answer") return event;
    const timeout = timedOut[event.seat];
    delete timedOut[event.seat];
    if (!event.default || !timeout || timeout.bank_left_ms === undefined) return event;
    return {...event, bank_spent_ms: timeout.bank_spent_ms, bank_left_ms: timeout.bank_left_ms};
  });
  return {...replay, events};
}

/** The time bank column of a step's seat table, when the match has a bank. */
function bankCell(step, s) {
  return {attrs: {"data-testid": "bank-left"}, content: `${seconds(step.bank[s])} s`};
}

const SPEEDS = [["0.5", "½×"], ["1", "1×"], ["2", "2×"], ["4", "4×"]];
const STEP_MS = 1000;  // one step a second at 1×

function replayViewer(logged, startStep, bots) {
  const replay = withTimeBank(logged);
  const steps = replaySteps(replay);
  const names = replay.seats.map((s) => s.name);
  const base = `#/match/${encodeURIComponent(replay.match_id)}`;
  let index = 0;
  let timer = null;
  const stage = h("div", {"data-testid": "stage"});
  const result = h("div", {});  // the result, shown at the last step only: no spoiler before
  const final = h("p", {class: "muted", "data-testid": "final-totals"},
    `Final totals: ${replay.totals.join(" · ")} · ranks `, replay.ranks.join(" · "),
    ` · ${replay.termination} · seed ${replay.seed}`);
  const hint = h("p", {class: "muted"}, "The final totals show at the last step.");
  const label = h("span", {"data-testid": "step-label"});
  const stepLink = h("a", {"data-testid": "step-link", href: base}, "link to this step");
  const slider = h("input", {type: "range", min: 0, max: steps.length - 1, value: 0,
                             "aria-label": "step", "data-testid": "slider",
                             oninput: (e) => go(Number(e.target.value))});
  const speed = h("select", {"data-testid": "speed", onchange: () => { if (timer) play(); }},
    SPEEDS.map(([value, text]) => h("option", {value, selected: value === "1"}, text)));
  const playButton = h("button", {"data-testid": "play", "aria-pressed": "false",
                                  onclick: () => (timer ? pause() : play())}, "▶ play");
  const buttons = {
    first: h("button", {"data-testid": "first", onclick: () => go(0)}, "« first"),
    prev: h("button", {"data-testid": "prev", onclick: () => go(index - 1)}, "◀ prev"),
    next: h("button", {"data-testid": "next", onclick: () => go(index + 1)}, "next ▶"),
    last: h("button", {"data-testid": "last", onclick: () => go(steps.length - 1)}, "last »"),
  };
  function play() {
    if (timer) clearInterval(timer);
    if (index === steps.length - 1) go(0);
    timer = setInterval(() => {
      if (index >= steps.length - 1) pause();
      else go(index + 1);
    }, STEP_MS / Number(speed.value));
    playButton.textContent = "⏸ pause";
    playButton.setAttribute("aria-pressed", "true");
  }
  function pause() {
    if (timer) clearInterval(timer);
    timer = null;
    playButton.textContent = "▶ play";
    playButton.setAttribute("aria-pressed", "false");
  }
  cleanup.push(pause);
  function go(i) {
    index = Math.max(0, Math.min(steps.length - 1, i));
    slider.value = index;
    buttons.first.disabled = buttons.prev.disabled = index === 0;
    buttons.next.disabled = buttons.last.disabled = index === steps.length - 1;
    const step = steps[index];
    label.textContent = `step ${index + 1} of ${steps.length}`;
    const hash = `${base}/step/${index + 1}`;
    stepLink.setAttribute("href", hash);
    if (location.hash !== hash) history.replaceState(null, "", hash);
    stage.replaceChildren(viewOf(replay.game).replayStep(step, names, replay, bots));
    result.replaceChildren(index === steps.length - 1 ? final : hint);
    if (!timer) announce(label.textContent);
  }
  listen(document, "keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    // A focused control handles its own keys: the slider steps once, by itself.
    if (e.target.closest && e.target.closest("input, select, textarea")) return;
    const moves = {ArrowRight: () => go(index + 1), ArrowLeft: () => go(index - 1),
                   Home: () => go(0), End: () => go(steps.length - 1)};
    if (moves[e.key]) { e.preventDefault(); moves[e.key](); }
  });
  const root = h("section", {class: "panel", "data-testid": "replay", "aria-label": "replay"},
    h("div", {class: "toolbar"}, buttons.first, buttons.prev, playButton, buttons.next,
      buttons.last, labelled("Speed", speed)),
    h("div", {class: "toolbar"}, slider, label, stepLink,
      h("a", {class: "button", "data-testid": "download", download: `${replay.match_id}.json`,
              href: `/api/matches/${encodeURIComponent(replay.match_id)}/replay`},
        "⬇ download replay")),
    h("p", {class: "muted"}, "Keys: ← → step, Home and End jump to the first and last."),
    bankOf(replay) ? h("p", {"data-testid": "time-bank"},
      `Time bank: ${seconds(bankOf(replay))} s per seat for the match, on top of `,
      `${seconds(replay.settings.deadline_ms)} s per decision; a late answer spends from `,
      "it.") : null,
    stage, result, answerSummary(replay, bots));
  go(startStep ? startStep - 1 : 0);
  return root;
}

/** Each seat's answers over the whole match, from the log: how many, how fast, and how
 * many were defaults (and why). */
function answerSummary(replay, bots) {
  const banked = bankOf(replay) > 0;
  const cols = [["Seat"], ["Answers", "num"], ["Median", "num"], ["Slowest", "num"],
                ["Defaults", "num"],
                ...(banked ? [["Paid by the bank", "num"], ["Bank left", "num"]] : [])];
  const answers = (replay.events || []).filter((e) => e.type === "answer");
  const rows = replay.seats.map((seat, s) => {
    const mine = answers.filter((a) => a.seat === s);
    const times = mine.filter((a) => a.ms !== undefined).map((a) => a.ms).sort((a, b) => a - b);
    const defaults = mine.filter((a) => a.default);
    const why = [...new Set(defaults.map((a) => a.why))].join(", ");
    const late = mine.filter((a) => a.bank_spent_ms);
    const left = mine.filter((a) => a.bank_left_ms !== undefined).map((a) => a.bank_left_ms);
    return tr({"data-seat": s}, cols, [botLink(seat.name, bots[s], seat.human), mine.length,
      times.length ? formatMs(times[Math.floor(times.length / 2)]) : "—",
      times.length ? formatMs(times[times.length - 1]) : "—",
      {attrs: {"data-testid": "defaults"},
       content: defaults.length ? `⚠ ${defaults.length} (${why})` : "0"},
      ...(banked ? [
        {attrs: {"data-testid": "bank-late"}, content: late.length
          ? `${late.length} (${seconds(late.reduce((sum, a) => sum + a.bank_spent_ms, 0))} s)`
          : "0"},
        {attrs: {"data-testid": "bank-end"},
         content: `${seconds(left.length ? left[left.length - 1] : bankOf(replay))} s`}] : [])]);
  });
  return h("details", {class: "answers"}, h("summary", {}, "Answer times and defaults"),
    table("Answer times and defaults by seat", cols, rows, {"data-testid": "answer-summary"}));
}

// -- live spectating ---------------------------------------------------------------------

/** The public state of a live match, rebuilt from its public events only: what every game
 * has, and what its view adds (its ``liveState``). */
function liveState(match) {
  const state = {game: match.game, names: match.seats, bots: match.bots || [],
                 humans: match.humans || [], events: 0, round: 0,
                 totals: new Array(match.seats.length).fill(0), log: [], last: null};
  viewOf(match.game).liveState(state);
  return state;
}

/** A PublicEvent in proto JSON ({"GAME": {"event_name": {...}}}, the game's id then the
 * event's) as the engine's event name (EventName) and its fields. */
function typedEvent(publicEvent) {
  const game = Object.keys(publicEvent)[0];
  const kind = Object.keys(publicEvent[game])[0];
  const type = kind.split("_").map((w) => w[0].toUpperCase() + w.slice(1)).join("");
  const data = {};
  for (const [field, value] of Object.entries(publicEvent[game][kind])) {
    // A list of Cards messages ({"cards": [...]}) as a list of card lists.
    data[field] = Array.isArray(value) && value.length && typeof value[0] === "object" &&
      value.every((c) => Object.keys(c).every((key) => key === "cards"))
      ? value.map((c) => c.cards || []) : value;
  }
  return {type, data};
}

/** Apply one public event to a live state (its game's view says what it changes). */
function applyPublic(state, event) {
  state.events += 1;
  state.last = event;
  viewOf(state.game).applyPublic(state, event);
}

/** Whose turn it is and their clocks, asked of the server every TURN_POLL_MS and counted
 * down in between. Public facts only: who must still answer and the time left. */
function turnPanel(match) {
  const names = match.seats;
  const line = h("p", {"data-testid": "turn"}, "Waiting for the first decision…");
  const clocks = h("ul", {class: "clocks", "data-testid": "clocks"});
  let turn = null, at = 0, stopped = false;
  const say = (text) => { if (line.textContent !== text) line.textContent = text; };
  const tick = () => {
    if (!turn) return;
    const gone = performance.now() - at;
    if (!turn.running) {
      say("Nobody is being waited for: the match is not in play here now.");
      clocks.replaceChildren(); clocks.dataset.seats = ""; return;
    }
    if (!turn.waiting.length) {
      say("Everyone has answered; the cards are being placed.");
      clocks.replaceChildren(); clocks.dataset.seats = ""; return;
    }
    say(turn.waiting.length === names.length && names.length > 1
      ? "Every seat is choosing at once:" : "To answer now:");
    const seats = turn.waiting.map((w) => w.seat).join(",");
    if (clocks.dataset.seats !== seats) {  // new items only when the seats change
      clocks.dataset.seats = seats;
      clocks.replaceChildren(...turn.waiting.map((w) => h("li", {"data-seat": w.seat},
        h("strong", {}, w.name), " · ", h("span", {class: "clock", "data-testid": "clock"}),
        ` of ${(turn.deadline_ms / 1000).toFixed(1)} s`,
        h("span", {class: "muted", "data-testid": "clock-bank"}))));
    }
    turn.waiting.forEach((w, i) => {
      // With a time bank the time left counts it: the decision's own seconds go first.
      const left = Math.max(0, w.ms_left - gone);
      const banked = w.bank_ms !== null && w.bank_ms !== undefined;
      const bank = banked ? Math.min(w.bank_ms, left) : 0;
      const item = clocks.children[i];
      item.querySelector(".clock").textContent = `${seconds(left - bank)} s left`;
      item.querySelector(".muted").textContent = banked ? ` · time bank: ${seconds(bank)} s` : "";
    });
  };
  const poll = async () => {
    if (stopped) return;
    try {
      turn = await api(`/api/matches/${encodeURIComponent(match.id)}/turn`);
      at = performance.now();
      tick();
    } catch (err) {
      line.textContent = String(err);
    }
  };
  every(TURN_POLL_MS, poll);
  const ticker = setInterval(tick, 100);
  const stop = () => { stopped = true; clearInterval(ticker); };
  cleanup.push(stop);
  const root = h("section", {class: "turn", "aria-labelledby": "turn-title",
                             "data-testid": "turn-panel"},
    h("h2", {id: "turn-title"}, "Whose turn"), line, clocks);
  return {root, stop: () => {
    stop(); line.textContent = "The match is over."; clocks.replaceChildren();
  }};
}

function liveView(match, onEnd) {
  const state = liveState(match);
  const stage = h("div", {"data-testid": "live-stage"});
  const counter = h("span", {"data-testid": "live-count"}, "0");
  const banner = h("p", {"data-testid": "live-status"}, h("span", {class: "live-dot"}),
    "Live — public facts only (hands and chip counts stay secret). Events: ", counter);
  const turn = turnPanel(match);
  // The list scrolls: it takes the keyboard's focus (Tab), and stays in place while it is
  // redrawn so the focus stays on it.
  const log = h("ul", {class: "log", "data-testid": "live-log", tabindex: "0",
                       "aria-labelledby": "live-log-title"});
  const root = h("section", {class: "panel", "data-testid": "live", "aria-label": "live match"},
    banner, turn.root, stage, h("h2", {id: "live-log-title"}, "What happened"), log);
  let drawn = 0;
  const draw = () => {
    drawn = state.events;
    counter.textContent = String(state.events);
    stage.replaceChildren(viewOf(state.game).live(state));
    log.replaceChildren(...state.log.slice(-30).reverse().map((line) => h("li", {}, line)));
  };
  const source = new EventSource(`/api/matches/${encodeURIComponent(match.id)}/feed`);
  source.addEventListener("event", (message) => {
    applyPublic(state, typedEvent(JSON.parse(message.data).event));
    if (drawn !== state.events) requestAnimationFrame(() => { if (drawn !== state.events) draw(); });
  });
  source.addEventListener("match_ended", (message) => {
    source.close();
    const end = JSON.parse(message.data).match_ended;
    state.totals = end.totals;
    turn.stop();
    draw();
    onEnd(end.termination === "TERMINATION_NORMAL" ? "finished" : "aborted");
    banner.replaceChildren(h("strong", {"data-testid": "live-ended"},
      `Match over (${end.termination.replace("TERMINATION_", "").toLowerCase()}): totals ${end.totals.join(" · ")}, ranks `,
      end.ranks.join(" · "), ". "), h("a", {href: `#/match/${match.id}`, onclick: () =>
        setTimeout(route, 0)}, "Watch the replay"));
  });
  cleanup.push(() => source.close());
  draw();
  return root;
}

// -- any game: the generic view ----------------------------------------------------------
// What the page draws for a game whose own view does not say otherwise: its replay decision
// by decision, its events as they come, a seat's observation with the actions it may take,
// the big screen's table and scoreboard, all from their JSON as it is.

/** A value of a replay, an event or an observation, drawn as it is: a list of plain values
 * on one line, a list of lists one item each, an object field by field. */
function dataView(value) {
  if (value === null || value === undefined) return h("span", {class: "muted"}, "—");
  if (Array.isArray(value)) {
    if (!value.length) return h("span", {class: "muted"}, "none");
    if (value.every((v) => v === null || typeof v !== "object")) return value.join(" · ");
    return h("ol", {class: "data", start: 0}, value.map((v) => h("li", {}, dataView(v))));
  }
  if (typeof value === "object") {
    return h("dl", {class: "data"}, Object.entries(value).map(([key, v]) =>
      [h("dt", {}, key.replace(/_/g, " ")), h("dd", {"data-field": key}, dataView(v))]).flat());
  }
  return String(value);
}

/** A value in words, on one line. */
function words(value) {
  if (value === null || value === undefined) return "—";
  if (Array.isArray(value)) return `[${value.map(words).join(", ")}]`;
  if (typeof value === "object") {
    return `{${Object.entries(value).map(([k, v]) => `${k} ${words(v)}`).join(", ")}}`;
  }
  return String(value);
}

/** A public event in words: its name, then each field (a seat by its name). */
function describe(event, names) {
  const fields = Object.entries(event.data || {}).map(([key, value]) =>
    `${key.replace(/_/g, " ")} ${key === "seat" && names[value] !== undefined ? names[value]
                                                                             : words(value)}`);
  return `${event.type}${fields.length ? `: ${fields.join(", ")}` : ""}.`;
}

/** A replay's steps for any game: the start, then one step per decision point of its log
 * (the answers applied there), each with every seat's answers so far. */
function genericSteps(replay) {
  const points = new Map();  // the engine's step of each decision point -> its answers
  for (const event of replay.events || []) {
    if (event.type !== "answer") continue;
    if (!points.has(event.step)) points.set(event.step, []);
    points.get(event.step).push(event);
  }
  const played = replay.seats.map(() => []);
  const steps = [{point: null, count: points.size, answers: [], played: played.map(() => [])}];
  [...points.values()].forEach((answers, i) => {
    for (const answer of answers) played[answer.seat].push(answer.action);
    steps.push({point: i, count: points.size, answers,
                played: played.map((actions) => [...actions])});
  });
  return steps;
}

function genericStep(step, names, replay, bots) {
  const bySeat = {};
  for (const answer of step.answers) bySeat[answer.seat] = answer;
  const banked = bankOf(replay) > 0;
  const cols = [["Seat"], ["Answered"], ["Answer"], ["Answers so far"],
                ...(banked ? [["Bank left", "num"]] : [])];
  const last = step.point !== null && step.point === step.count - 1;
  return h("div", {},
    h("p", {class: "big", "data-testid": "where"}, step.point === null
      ? `The start · ${step.count} decision point${step.count === 1 ? "" : "s"} to come`
      : `Decision point ${step.point + 1} of ${step.count}`),
    h("h2", {}, "Seats"), table("Seats", cols, names.map((name, s) => tr({"data-seat": s}, cols, [
      botLink(name, bots[s], replay.seats[s].human),
      {attrs: {"data-testid": "action"}, content: bySeat[s]
        ? `${String(bySeat[s].kind).toLowerCase().replace(/_/g, " ")}: ${bySeat[s].action}` : ""},
      bySeat[s] ? answerNote(bySeat[s]) : "",
      {attrs: {"data-testid": "played"}, content: step.played[s].join(" · ")},
      ...(banked ? [bankCell(step, s)] : [])])), {"data-testid": "seats"}),
    last ? [h("h2", {}, "Rounds, as the replay records them"),
            h("div", {"data-testid": "rounds"}, dataView(replay.rounds))] : null);
}

function genericLive(state) {
  const cols = [["Seat"], ["Total", "num"]];
  return h("div", {},
    h("p", {class: "big", "data-testid": "where"}, state.last
      ? describe(state.last, state.names) : "Waiting for the first event…"),
    state.last ? h("div", {"data-testid": "last-event"}, dataView(state.last.data)) : null,
    h("h2", {}, "Seats"), table("Seats", cols, state.names.map((name, s) =>
      tr({"data-seat": s}, cols, [botLink(name, state.bots[s], state.humans.includes(s)),
        {attrs: {"data-testid": "total"}, content: state.totals[s]}])), {"data-testid": "seats"}));
}

/** A seat's table on the play page for any game: what the seat sees, and a button for each
 * action it may take now. */
function genericPlayTable(seat) {
  const play = seat.play;
  const legal = seat.waiting() ? play.decision.legal || [] : [];
  const cols = [["Seat"], ["Total", "num"]];
  return [
    h("h2", {}, "What you see"),
    h("div", {"data-testid": "observation"}, play.obs ? dataView(play.obs)
                                                       : h("span", {class: "muted"}, "—")),
    h("h2", {}, "Your choices"),
    h("div", {class: "toolbar", "data-testid": "choices"}, legal.length ? legal.map((action) => {
      const [field, value] = Object.entries(action)[0];
      return h("button", {[`data-${field === "card" ? "play" : field}`]: value,
                          onclick: () => seat.answer(action, `chose ${field} ${value}`)},
               `${field} ${value}`);
    }) : h("span", {class: "muted"}, "none now")),
    h("h2", {}, "Seats"), seat.seatsTable(cols, (name, s) => [
      s === play.seat ? h("strong", {}, "you") : name,
      {attrs: {"data-testid": "total"}, content: play.pub.totals[s]}])];
}

/** The big screen's table for any game: its latest public events, newest first. */
function genericTvTable() {
  const events = h("ol", {class: "events", "data-testid": "tv-events"});
  const root = h("div", {class: "table generic"}, h("h3", {}, "What happened"), events);
  const draw = (state, event) => {
    events.prepend(h("li", {}, describe(event, state.names)));
    while (events.children.length > 8) events.lastChild.remove();
  };
  return {root, draw, say: () => {}};
}

/** The hooks a game's view may give (registerGameView), each as any game is drawn. */
const GENERIC = {
  /** The settings of the play button's match and a note on its label; null: none. */
  quickPlay: null,
  /** A large card for the big screen. */
  bigCard: (card) => h("span", {class: "tvcard", "data-card": card},
                       h("span", {class: "num"}, card)),
  /** The replay viewer's steps, each what the viewer shows there. */
  replaySteps: genericSteps,
  /** The answers a step shows (for the time bank left after it). */
  stepAnswers: (step) => (Array.isArray(step.answers) ? step.answers : []),
  /** One step of the replay viewer. */
  replayStep: genericStep,
  /** Adds the game's own fields to a live match's state (liveState). */
  liveState: () => {},
  /** Applies one public event to a live state. */
  applyPublic: (state, event) => {
    const d = event.data;
    if (typeof d.round === "number") state.round = d.round;
    if (Array.isArray(d.totals)) state.totals = d.totals;
    state.log.push(describe(event, state.names));
  },
  /** The live view's stage. */
  live: genericLive,
  /** The play page's prompt for each decision kind. */
  prompts: {},
  /** What a seat's observation says of the public state (a page opened mid-match). */
  fromObservation: (pub, obs) => {
    if (typeof obs.round === "number") pub.round = obs.round;
    if (Array.isArray(obs.totals)) pub.totals = obs.totals;
  },
  /** Whether a public event settles the seat's decision: {done, same} (what was done, in
   * words, and whether it was the seat's own choice), or null. */
  resolves: () => null,
  /** The play page's table for a seat. */
  playTable: genericPlayTable,
  /** The play page's keys for the game's decisions. */
  playKeys: () => {},
  /** The big screen's table: {root, draw(state, event), say(bySeat, move)}. */
  tvTable: genericTvTable,
  /** Which move of the public feed an answer of the replay's log comments on:
   * {kind, byStep} (byStep: every seat's answer of one decision point is one move), or
   * null for an answer no event shows. */
  commentKind: () => null,
  /** The move a public event shows: {kind, clear, seat}, or null (tv.js). */
  moveOf: () => null,
  /** Where the game stands after an event, in words. */
  whereText: (state, event) => describe(event, state.names),
  /** A seat on the big screen's scoreboard: {running, sub}. */
  tvScore: (state, s) => ({running: state.totals[s], sub: ""}),
};

// -- routing -----------------------------------------------------------------------------

/** The live tournaments, newest first, refreshed while shown. */
function renderTournaments(view) {
  const cols = [["Tournament"], ["Game"], ["Format"], ["Bots"], ["Played", "num"], ["Status"]];
  const rows = h("tbody", {"data-testid": "tournaments"});
  view.replaceChildren(h("h1", {}, "Tournaments"),
    h("section", {class: "panel", "aria-labelledby": "tournaments-title"},
      h("h2", {id: "tournaments-title", class: "sr-only"}, "Tournaments"),
      h("table", {class: "stack"}, h("caption", {class: "sr-only"}, "Tournaments"),
        h("thead", {}, h("tr", {}, cols.map(([t, c]) => h("th", {scope: "col", class: c}, t)))),
        rows)));
  every(REFRESH_MS, async () => {
    try {
      const found = (await api("/api/tournaments")).tournaments;
      rows.replaceChildren(...(found.length ? found.map((t) => tr({"data-tournament":
        t.tournament_id}, cols, [h("a", {href: `#/tournament/${encodeURIComponent(
          t.tournament_id)}`}, t.tournament_id), gameName(t.game), t.format,
        {attrs: {}, content: t.bots.map((b, i) => [i ? ", " : "", botLink(b, b)]).flat()},
        `${t.played} / ${t.total}`, statusTag(t.status)]))
        : [h("tr", {}, h("td", {colspan: cols.length, class: "muted"}, "No tournaments."))]));
    } catch (err) {
      rows.replaceChildren(h("tr", {}, h("td", {colspan: cols.length, class: "error"},
                                              String(err))));
    }
  });
}

function interval(value, ci, digits) {
  if (value === null || value === undefined) return "–";
  return ci === null || ci === undefined ? value.toFixed(digits)
    : `${value.toFixed(digits)} ± ${ci.toFixed(digits)}`;
}

/** Games of a tournament's schedule shown at once: the page around the games being played. */
const SCHEDULE_SHOWN = 100;

/** One tournament: its standings (95% intervals) and its games around those being played
 * (a page of the schedule), refreshed while it runs. */
function renderTournament(view, id) {
  const standCols = [["Place", "num"], ["Bot"], ["Games", "num"], ["Win share", "num"],
                     ["Score per round", "num"], ["vs field", "num"], ["Mean rank", "num"]];
  const gameCols = [["Game", "num"], ["Table", "num"], ["Deal", "num"], ["Seats"],
                    ["Match"], ["Ranks"], ["Status"]];
  const title = h("h1", {}, "Tournament ", h("span", {}, id));
  const facts = h("p", {class: "muted", "data-testid": "tournament-facts"}, "Loading…");
  const standings = h("tbody", {"data-testid": "standings"});
  const games = h("tbody", {"data-testid": "tournament-games"});
  const shown = h("p", {class: "muted", "data-testid": "tournament-shown"});
  const head = (cols) => h("thead", {}, h("tr", {}, cols.map(([t, c]) =>
    h("th", {scope: "col", class: c}, t))));
  view.replaceChildren(title, facts,
    h("section", {class: "panel", "aria-labelledby": "standings-title"},
      h("h2", {id: "standings-title"}, "Standings"),
      h("p", {class: "muted"}, "Best first by score against the field; ± is a 95% interval " +
        "over games (round-robin) or deals (duplicate)."),
      h("table", {class: "stack"}, h("caption", {class: "sr-only"}, "Standings"),
        head(standCols), standings)),
    h("section", {class: "panel", "aria-labelledby": "games-title"},
      h("h2", {id: "games-title"}, "Games"), shown,
      h("table", {class: "stack"}, h("caption", {class: "sr-only"}, "Games"),
        head(gameCols), games)));
  let over = false;
  let from = 0;
  every(REFRESH_MS, async () => {
    if (over) return;
    let t;
    try {
      t = await api(`/api/tournaments/${encodeURIComponent(id)}?offset=${from}` +
                    `&limit=${SCHEDULE_SHOWN}`);
    } catch (err) {
      facts.replaceChildren(h("span", {class: "error"}, String(err)));
      return;
    }
    over = t.status !== "running";
    facts.replaceChildren(`${gameName(t.game)} · ${t.format} · tables of ${t.seats} · ` +
      `${t.games} games a table · `, h("span", {"data-testid": "tournament-played"},
      `${t.played} of ${t.total} played`), " · ", statusTag(t.status),
      t.forfeited.length ? ` · forfeited: ${t.forfeited.join(", ")}` : "");
    standings.replaceChildren(...(t.standings.length ? t.standings.map((s, i) =>
      tr({"data-bot": s.bot}, standCols, [i + 1, {attrs: {}, content: [botLink(s.bot, s.bot),
        s.forfeited ? " (forfeited)" : ""]}, s.games, interval(s.win_share, s.win_share_ci95, 2),
        interval(s.mean_score, s.mean_score_ci95, 2), interval(s.vs_field, s.vs_field_ci95, 2),
        s.mean_rank.toFixed(2)]))
      : [h("tr", {}, h("td", {colspan: standCols.length, class: "muted"},
                          "No game finished yet."))]));
    from = Math.max(0, Math.min(t.played - 10, t.total - SCHEDULE_SHOWN));
    shown.replaceChildren(t.total > t.schedule.length ? `Games ${t.schedule_offset + 1}–` +
      `${t.schedule_offset + t.schedule.length} of ${t.total}, around those being played.` : "");
    games.replaceChildren(...t.schedule.map((g, i) => tr({"data-status": g.status}, gameCols,
      [t.schedule_offset + i + 1, g.table + 1, g.deal + 1, {attrs: {}, content: g.seats.map((b, k) =>
        [k ? ", " : "", botLink(b, b), g.absent.includes(b) ? " (absent)" : ""]).flat()},
       g.match_id ? matchLink(g.match_id) : "–", g.ranks ? g.ranks.join(" · ") : "–",
       statusTag(g.status)])));
  });
}

function route() {
  for (const stop of cleanup) stop();
  cleanup = [];
  const view = document.getElementById("view");
  const path = location.hash.split("?")[0];
  const match = path.match(/^#\/match\/([^/]+)(?:\/step\/(\d+))?$/);
  const bot = path.match(/^#\/bot\/([^/]+)$/);
  const cup = path.match(/^#\/tournament\/([^/]+)$/);
  if (cup) renderTournament(view, decodeURIComponent(cup[1]));
  else if (path === "#/tournaments") renderTournaments(view);
  else if (match) renderMatch(view, decodeURIComponent(match[1]), match[2] ? Number(match[2]) : null);
  else if (bot) renderBot(view, decodeURIComponent(bot[1]));
  else renderHome(view);
  window.scrollTo(0, 0);
}

// The skip link moves the focus to the content without touching the address, whose hash
// holds the page's route (a listener here: the Content-Security-Policy allows no inline
// handler).
for (const skip of document.querySelectorAll("a.skip")) {
  skip.addEventListener("click", (event) => {
    event.preventDefault();
    document.getElementById("view").focus();
  });
}

if (!document.body.dataset.page) {  // the play page (play.js) uses the helpers above only
  gamesReady.catch((err) => console.warn(`no list of games: ${err.message}`)).then(() => {
    window.addEventListener("hashchange", route);
    route();
  });
}
