// The big screen (/tv, docs/tv.md): a page for a projector that follows the featured game
// by itself (GET /api/tv: the tournament on air, else the best-rated live match, else the
// latest finished one) and shows it as a paced broadcast. Games run at machine speed; this
// page replays each game's public feed (/api/matches/{id}/feed: the very public events a
// spectator gets, never a hand or a choice before its reveal) at a set number of steps a
// second, one event a step, never ahead of the game: an event is shown only once it has
// happened. A tournament is followed game by game in schedule order, each to its end, with
// its standings (as they stood after that game) and cross-table in between.
//
// Keys: n or → next, space pause, + and − speed. The page tells tests (and anyone) what it
// shows through attributes on <main> (data-phase, data-match, data-steps, ...) and events
// on document: tv:game-start, tv:step, tv:game-end, tv:standings, tv:final.
// Each game's table, moves and scoreboard lines are its view's (app.js viewOf: the game's own
// hooks, else the generic ones). Helpers (h, api, viewOf, liveState, applyPublic,
// typedEvent, ...) come from app.js.
"use strict";

(() => {
  const params = new URLSearchParams(location.search);

  /** A number from the page's address, within [low, high], else ``fallback``. */
  function param(name, fallback, low, high) {
    const value = Number(params.get(name));
    return params.has(name) && Number.isFinite(value) && value >= low && value <= high
      ? value : fallback;
  }

  const PACES = [0.25, 0.5, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64];  // steps a second
  const RESULT_STEPS = 3;      // the table at a game's end, before the standings
  const STANDINGS_STEPS = 8;   // the standings between two games of a tournament
  const FINAL_HOLD_S = param("hold", 60, 0, 86400);  // the final standings, before moving on
  const REWIND_S = param("rewind", 60, 0, 3600);     // how far back a broadcast reaches
  const AIR_POLL_MS = 2000;    // how often the page asks what is on air (or how a game stands)
  const TURN_POLL_MS = 500;    // how often it asks whose turn it is, once caught up with a game
  const MAX_ANIM_MS = 450;     // the longest a card's move takes (shorter at a fast pace)

  const tv = {
    pace: param("pace", 2, 0.1, 100),
    paused: false,
    skip: 0,                 // bumped by "next": what is shown now ends
    shown: new Set(),        // matches shown to their end (or skipped)
    done: new Set(),         // tournaments broadcast to their end
    parts: null,
  };

  // -- time: steps of the broadcast ------------------------------------------------------

  function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }

  /** Wait ``units`` at ``rate()`` units a second, frozen while paused; false if "next" cut
   * it short. Measured on the page's clock, so a step is never shorter than 1 / pace. */
  async function waitUnits(units, rate) {
    const skip = tv.skip;
    let left = units;
    let last = performance.now();
    while (left > 0) {
      await sleep(tv.paused ? 100 : Math.min(100, (left * 1000) / rate()));
      const now = performance.now();
      if (tv.skip !== skip) return false;
      if (!tv.paused) left -= ((now - last) * rate()) / 1000;
      last = now;
    }
    return true;
  }

  function waitSteps(steps) { return waitUnits(steps, () => tv.pace); }
  function waitSeconds(seconds) { return waitUnits(seconds, () => 1); }

  /** How long a card's move takes at this pace (ms). */
  function animMs() {
    if (window.matchMedia("(prefers-reduced-motion: reduce)").matches) return 0;
    return Math.round(Math.min(MAX_ANIM_MS, 800 / tv.pace));
  }

  // -- what the page tells -----------------------------------------------------------------

  function setPhase(phase) { tv.parts.root.dataset.phase = phase; }

  function signal(name, detail) {
    document.dispatchEvent(new CustomEvent(`tv:${name}`, {detail: {...detail,
                                                                   at: performance.now()}}));
  }

  // -- the page's frame --------------------------------------------------------------------

  function frame() {
    const root = document.getElementById("tv");
    const button = (testid, label, text, action) => h("button", {type: "button",
      "data-testid": testid, "aria-label": label, onclick: action}, text);
    const parts = {
      root,
      programme: h("p", {class: "programme", "data-testid": "tv-programme"},
                   "Looking for a game…"),
      onair: h("p", {class: "onair", "data-testid": "tv-onair"}),
      speed: h("span", {class: "speed", "data-testid": "tv-speed"}),
      pause: button("tv-pause", "pause", "⏸ pause", togglePause),
      stage: h("div", {class: "stage-body", "data-testid": "tv-stage"}),
      where: h("p", {class: "where", "data-testid": "tv-where"}),
      scores: h("ol", {class: "scores", "data-testid": "tv-scores"}),
      awaited: h("div", {class: "awaited-body", "data-testid": "tv-awaited"}),
      between: h("div", {class: "between-body", "data-testid": "tv-between"}),
      betweenTitle: h("h2", {id: "between-title"}, "Standings"),
    };
    parts.pause.setAttribute("aria-pressed", "false");
    root.replaceChildren(
      h("header", {class: "bar"},
        h("h1", {id: "tv-title"}, "Bullring ", h("span", {class: "tv-mark"}, "TV")),
        h("div", {class: "now"}, parts.programme, parts.onair),
        h("div", {class: "controls", role: "group", "aria-label": "broadcast"},
          button("tv-slower", "slower", "−", () => changePace(-1)), parts.speed,
          button("tv-faster", "faster", "+", () => changePace(1)), parts.pause,
          button("tv-next", "next", "next ▶", next))),
      h("section", {class: "stage", "aria-labelledby": "stage-title"},
        h("h2", {id: "stage-title", class: "sr-only"}, "The table"), parts.where, parts.stage),
      h("aside", {class: "side", "aria-label": "scores and clock"},
        h("section", {class: "scoreboard", "aria-labelledby": "scores-title"},
          h("h2", {id: "scores-title"}, "Scoreboard"), parts.scores),
        h("section", {class: "awaited", "aria-labelledby": "awaited-title"},
          h("h2", {id: "awaited-title"}, "Awaited"), parts.awaited)),
      h("section", {class: "between", "aria-labelledby": "between-title"},
        parts.betweenTitle, parts.between),
      h("footer", {class: "keys"}, "Keys: ", h("kbd", {}, "n"), " or ", h("kbd", {}, "→"),
        " next · ", h("kbd", {}, "space"), " pause · ", h("kbd", {}, "+"), " ",
        h("kbd", {}, "−"), " speed · ", h("a", {href: "/"}, "the full site")));
    tv.parts = parts;
    showPace();
  }

  function showPace() {
    const parts = tv.parts;
    parts.root.dataset.pace = String(tv.pace);
    parts.root.dataset.paused = String(tv.paused);
    parts.root.style.setProperty("--anim", `${animMs()}ms`);
    parts.speed.textContent = `${tv.pace} step${tv.pace === 1 ? "" : "s"}/s`;
    parts.pause.textContent = tv.paused ? "▶ play" : "⏸ pause";
    parts.pause.setAttribute("aria-pressed", String(tv.paused));
  }

  function togglePause() {
    tv.paused = !tv.paused;
    showPace();
    announce(tv.paused ? "Paused." : "Playing.");
  }

  function changePace(direction) {
    const faster = PACES.find((p) => p > tv.pace);
    const slower = [...PACES].reverse().find((p) => p < tv.pace);
    tv.pace = direction > 0 ? (faster || tv.pace) : (slower || tv.pace);
    showPace();
    announce(`${tv.pace} steps a second.`);
  }

  function next() {
    tv.skip += 1;
    announce("Next.");
  }

  function keys(e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const moves = {"n": next, "N": next, "ArrowRight": next, " ": togglePause,
                   "+": () => changePace(1), "=": () => changePace(1),
                   "-": () => changePace(-1), "_": () => changePace(-1),
                   "−": () => changePace(-1)};
    if (moves[e.key]) { e.preventDefault(); moves[e.key](); }
  }

  // -- cards that come and go ------------------------------------------------------------

  /** Let ``el`` come in: it starts as .enter and moves to its place (a CSS transition). */
  function enter(el) {
    el.classList.add("enter");
    requestAnimationFrame(() => requestAnimationFrame(() => el.classList.remove("enter")));
    return el;
  }

  /** Let ``el`` go: it fades out (a CSS transition), then leaves the page. */
  function leave(el) {
    el.classList.add("leave");
    el.setAttribute("aria-hidden", "true");
    setTimeout(() => el.remove(), animMs() + 20);
  }

  /** Make ``box`` hold ``cards`` in order: new ones come in, the others go. */
  function syncCards(box, cards, game) {
    const want = new Set(cards.map(String));
    const have = new Map();
    for (const el of [...box.children]) {
      if (el.classList.contains("leave")) continue;
      if (want.has(el.dataset.card)) have.set(el.dataset.card, el);
      else leave(el);
    }
    for (const card of cards) {
      box.append(have.get(String(card)) || enter(bigCard(card, game)));
    }
  }

  // -- a game on the table -----------------------------------------------------------------

  function ordinal(rank) {
    return `${rank}${rank === 1 ? "st" : rank === 2 ? "nd" : rank === 3 ? "rd" : "th"}`;
  }

  /** ``say(bySeat, move)`` for a table's seat items: each seat's comment on the move just
   * shown (as text: it is the bot's own, untrusted). A seat without one keeps its last
   * comment, unless ``move.clear`` (a new trick or round) or it is ``move.seat`` (whose
   * move this is). */
  function sayIn(items) {
    return (bySeat, move) => items.forEach((li, s) => {
      const said = li.querySelector(".said");
      if (bySeat[s] !== undefined) said.textContent = bySeat[s];
      else if (move.clear || move.seat === s) said.textContent = "";
    });
  }

  // -- the bots' comments ------------------------------------------------------------------

  /** The comments of an ended match's replay, by the public event that shows each move:
   * for each kind of move event, one entry per such event in feed order, each the comments
   * by seat. A comment is never public before its match ends (docs/protocol.md), so only
   * an ended match's replay is asked for. */
  async function commentsOf(match) {
    let replay;
    try {
      replay = await api(`/api/matches/${encodeURIComponent(match.id)}/replay`);
    } catch (err) {
      return null;
    }
    const view = viewOf(match.game);
    const found = {};
    const pointAt = new Map();  // a decision point's step → its move's entry (byStep kinds)
    for (const e of replay.events || []) {
      if (e.type !== "answer") continue;
      const move = view.commentKind(e);
      if (move === null) continue;  // an answer that no public event shows
      const list = found[move.kind] || (found[move.kind] = []);
      let entry;
      if (move.byStep) {
        const key = `${move.kind} ${e.step}`;
        if (!pointAt.has(key)) {
          pointAt.set(key, {});
          list.push(pointAt.get(key));
        }
        entry = pointAt.get(key);
      } else {
        entry = {};
        list.push(entry);
      }
      if (e.comment) entry[e.seat] = e.comment;
    }
    return found;
  }

  /** The scoreboard: every seat's total (lower is better), and what its game's view says
   * of this round. */
  function drawScores(state, roundOpen, ended) {
    const view = viewOf(state.game);
    const scores = state.names.map((_, s) => view.tvScore(state, s, roundOpen));
    const running = scores.map((score) => score.running);
    const best = Math.min(...running);
    const apart = running.some((value) => value !== best);  // a lead only once there is one
    tv.parts.scores.replaceChildren(...state.names.map((name, s) => {
      const rank = ended ? ended.ranks[s] : null;
      const lead = ended ? rank === 1 : running[s] === best && apart;
      return h("li", {"data-seat": s, "data-rank": rank, class: lead ? "lead" : null},
        h("span", {class: "who"}, name),
        h("span", {class: "total", "data-testid": "tv-total"},
          String(ended ? ended.totals[s] : running[s])),
        h("span", {class: "sub"}, ended ? ordinal(rank) : scores[s].sub));
    }));
  }

  // -- whose turn it is --------------------------------------------------------------------

  /** The awaited panel: while the broadcast has caught up with a live game, whose turn it
   * is and their clocks (GET /api/matches/{id}/turn); behind the game, how far behind. */
  function awaited(matchId) {
    const box = tv.parts.awaited;
    let turn = null, at = 0, live = false, timer = null, ticker = null;
    const say = (...content) => box.replaceChildren(...content);
    const draw = () => {
      if (!live || !turn) return;
      if (!turn.running) { say(h("p", {}, "Nobody is awaited.")); return; }
      if (!turn.waiting.length) {
        say(h("p", {}, "Everyone has answered; the next decision comes at the table's pace."));
        return;
      }
      const gone = performance.now() - at;
      say(h("ul", {class: "clocks"}, turn.waiting.map((w) => h("li", {"data-seat": w.seat},
        h("span", {class: "who"}, w.name),
        h("span", {class: "clock", "data-testid": "tv-clock"},
          `${seconds(Math.max(0, w.ms_left - gone))} s`)))));
    };
    const poll = async () => {
      try {
        turn = await api(`/api/matches/${encodeURIComponent(matchId)}/turn`);
        at = performance.now();
        draw();
      } catch (err) {
        turn = null;
      }
    };
    return {
      behind(count) {
        if (live) { live = false; clearInterval(timer); clearInterval(ticker); }
        say(h("p", {"data-testid": "tv-behind"}, count
          ? `Replaying the game at ${tv.pace} steps a second: ${count} step` +
            `${count > 1 ? "s" : ""} behind it.`
          : "Waiting for the game's next step."));
      },
      caughtUp() {
        if (live) return;
        live = true;
        say(h("p", {}, "Caught up with the game."));
        poll();
        timer = setInterval(poll, TURN_POLL_MS);
        ticker = setInterval(draw, 100);
      },
      stop(text) {
        live = false; clearInterval(timer); clearInterval(ticker);
        say(h("p", {}, text));
      },
    };
  }

  // -- one game, paced ---------------------------------------------------------------------

  /** Show one match's public feed at the pace, one event a step, to its end (or until
   * ``cut()`` says stop, or "next"). Returns how it went: {ended} (its MatchEnded), {cut}
   * or {unwatchable} (its feed is not served here now: it runs on another server). */
  async function showMatch(match, label, cut) {
    const parts = tv.parts;
    const state = liveState(match);
    const view = viewOf(match.game);
    const table = view.tvTable(match, {syncCards, sayIn});
    const queue = [];
    let ended = null, closed = false, wake = null;
    const source = new EventSource(`/api/matches/${encodeURIComponent(match.id)}/feed`);
    source.addEventListener("event", (message) => {
      queue.push(typedEvent(JSON.parse(message.data).event));
      if (wake) wake();
    });
    source.addEventListener("match_ended", (message) => {
      ended = JSON.parse(message.data).match_ended;
      source.close();
      if (wake) wake();
    });
    source.addEventListener("error", () => {
      if (source.readyState === EventSource.CLOSED) { closed = true; if (wake) wake(); }
    });
    const clock = awaited(match.id);
    parts.programme.replaceChildren(label);
    parts.stage.replaceChildren(table.root);
    parts.where.textContent = "Waiting for the deal…";
    parts.root.dataset.match = match.id;
    parts.root.dataset.steps = "0";
    parts.root.dataset.ended = "false";
    setPhase("game");
    drawScores(state, false, null);
    clock.behind(0);
    signal("game-start", {match: match.id});
    announce(`${label.textContent || label}: ${match.seats.join(", ")}.`);
    const skip = tv.skip;
    let shown = 0, roundOpen = false, last = null;
    // The comments, once the match is over (known now, or when its feed says so).
    let said = match.totals ? (await commentsOf(match)) || {} : null;
    const moves = {};  // how many moves of each kind were shown
    try {
      for (;;) {
        if (tv.skip !== skip || (cut && cut())) return {cut: true};
        if (tv.paused) { await sleep(100); continue; }  // paused: nothing new is shown
        if (queue.length) {
          if (ended && said === null) said = (await commentsOf(match)) || {};
          const event = queue.shift();
          applyPublic(state, event);
          if (event.type === "RoundStarted") roundOpen = true;
          if (event.type === "RoundEnded" || event.type === "GameEnded") roundOpen = false;
          table.draw(state, event);
          const move = view.moveOf(event, state);
          if (move) {
            const bySeat = move.kind === null ? {}
              : ((said || {})[move.kind] || [])[moves[move.kind] || 0] || {};
            if (move.kind !== null) moves[move.kind] = (moves[move.kind] || 0) + 1;
            table.say(bySeat, move);
          }
          shown += 1;
          last = event;
          parts.where.textContent = view.whereText(state, event, roundOpen);
          drawScores(state, roundOpen, null);
          parts.root.dataset.steps = String(shown);
          signal("step", {match: match.id, step: shown, type: event.type});
          if (queue.length || !ended) clock.behind(queue.length);
          if (!await waitSteps(1)) return {cut: true};
          continue;
        }
        if (ended) break;
        if (closed) {  // not watchable from here now (it runs on another server)
          parts.where.textContent = "This game is not watchable from this server yet.";
          await waitSeconds(AIR_POLL_MS / 1000);
          return {unwatchable: true};
        }
        clock.caughtUp();
        await new Promise((resolve) => { wake = resolve; setTimeout(resolve, 250); });
        wake = null;
      }
    } finally {
      source.close();
    }
    state.totals = ended.totals;
    drawScores(state, false, ended);
    const normal = ended.termination === "TERMINATION_NORMAL";
    const winners = match.seats.filter((_, s) => ended.ranks[s] === 1);
    parts.where.textContent = normal ? `Game over: ${winners.join(" and ")} win` +
      `${winners.length > 1 ? "" : "s"}` : "The game was aborted";
    if (last === null) parts.where.textContent += " (no public event was recorded)";
    clock.stop(normal ? "The game is over." : "The game was aborted.");
    parts.root.dataset.ended = "true";
    tv.shown.add(match.id);
    signal("game-end", {match: match.id, steps: shown, termination: ended.termination,
                        totals: ended.totals, ranks: ended.ranks});
    announce(parts.where.textContent + ".");
    return {ended};
  }

  // -- a tournament, game by game ----------------------------------------------------------

  /** The cross-table over ``games``: for each pair, how often the row's bot finished ahead
   * of, level with and behind the column's. */
  function crossTable(bots, games) {
    const score = {};
    for (const a of bots) { score[a] = {}; for (const b of bots) score[a][b] = [0, 0, 0]; }
    for (const game of games) {
      if (game.status !== "finished" || !game.ranks) continue;
      game.seats.forEach((a, i) => game.seats.forEach((b, j) => {
        if (i === j || !score[a] || !score[a][b]) return;
        const ra = game.ranks[i], rb = game.ranks[j];
        score[a][b][ra < rb ? 0 : ra === rb ? 1 : 2] += 1;
      }));
    }
    return h("div", {class: "cross-scroll", tabindex: "0", role: "region",
                     "aria-labelledby": "cross-title"},
      h("table", {class: "cross", "data-testid": "tv-cross"},
        h("caption", {id: "cross-title"}, "Cross-table: finished ahead–level–behind"),
        h("thead", {}, h("tr", {}, h("th", {scope: "col"}, h("span", {class: "sr-only"}, "bot")),
          bots.map((b) => h("th", {scope: "col"}, b)))),
        h("tbody", {}, bots.map((a) => h("tr", {"data-bot": a}, h("th", {scope: "row"}, a),
          bots.map((b) => {
            if (a === b) return h("td", {class: "self"}, "—");
            const [w, d, l] = score[a][b];
            return h("td", {"data-against": b, "data-score": `${w},${d},${l}`,
                            class: w > l ? "ahead" : l > w ? "behind" : null},
              `${w}–${d}–${l}`,
              h("span", {class: "sr-only"}, ` (${a} against ${b}: ${w} ahead, ${d} level, ` +
                `${l} behind)`));
          }))))));
  }

  function fixed(value, digits) {
    return value === null || value === undefined ? "–" : value.toFixed(digits);
  }

  /** The standings, each bot's rank change since ``before`` shown and animated: a row moves
   * from where it stood to its new place (a CSS transition on its transform). */
  function drawStandings(t, after, before, games, final) {
    const parts = tv.parts;
    const old = new Map();
    for (const row of parts.between.querySelectorAll("tbody[data-testid=tv-standings] tr")) {
      old.set(row.dataset.bot, row.getBoundingClientRect().top);
    }
    const was = new Map((before || []).map((s, i) => [s.bot, i + 1]));
    const cols = ["#", "Bot", "Move", "Games", "Win share", "vs field", "Mean rank"];
    const rows = after.standings.map((s, i) => {
      const rank = i + 1, prior = was.get(s.bot);
      const move = prior === undefined ? 0 : prior - rank;
      return h("tr", {"data-bot": s.bot, "data-rank": rank, "data-move": move},
        h("td", {class: "num"}, rank),
        h("th", {scope: "row"}, s.bot, s.forfeited ? " (forfeited)" : ""),
        h("td", {class: `move ${move > 0 ? "up" : move < 0 ? "down" : "same"}`},
          move > 0 ? `▲ ${move}` : move < 0 ? `▼ ${-move}` : "=",
          h("span", {class: "sr-only"}, move > 0 ? ` (up ${move})` : move < 0
            ? ` (down ${-move})` : " (unchanged)")),
        h("td", {class: "num"}, s.games),
        h("td", {class: "num"}, s.win_share_ci95 === null || s.win_share_ci95 === undefined
          ? fixed(s.win_share, 2) : `${fixed(s.win_share, 2)} ± ${fixed(s.win_share_ci95, 2)}`),
        h("td", {class: "num"}, s.vs_field_ci95 === null || s.vs_field_ci95 === undefined
          ? fixed(s.vs_field, 2) : `${fixed(s.vs_field, 2)} ± ${fixed(s.vs_field_ci95, 2)}`),
        h("td", {class: "num"}, fixed(s.mean_rank, 2)));
    });
    const body = h("tbody", {"data-testid": "tv-standings"}, rows.length ? rows
      : h("tr", {}, h("td", {colspan: cols.length}, "No game finished yet.")));
    parts.betweenTitle.textContent = final
      ? `Final standings · ${after.after} of ${t.total} games`
      : `Standings after game ${after.after} of ${t.total}`;
    parts.between.replaceChildren(
      h("div", {class: "standings-scroll", tabindex: "0", role: "region",
                "aria-labelledby": "standings-caption"},
        h("table", {class: "standings"},
          h("caption", {id: "standings-caption"}, final ? "Final standings" : "Standings so far",
            h("span", {class: "note"}, " · best first; ± a 95% interval")),
          h("thead", {}, h("tr", {}, cols.map((c, i) => h("th", {scope: "col",
            class: i === 1 || i === 2 ? null : "num"}, c)))),
          body)),
      crossTable(t.bots, games));
    const ms = animMs() * 2;
    for (const row of rows) {  // FLIP: from the old place to the new one
      const from = old.get(row.dataset.bot);
      if (from === undefined || !ms) continue;
      const delta = from - row.getBoundingClientRect().top;
      if (!delta) continue;
      row.style.transition = "none";
      row.style.transform = `translateY(${delta}px)`;
      row.getBoundingClientRect();
      row.style.transition = `transform ${ms}ms ease`;
      row.style.transform = "";
    }
  }

  async function showStandings(t, index, before, final) {
    const after = await api(`/api/tournaments/${encodeURIComponent(t.tournament_id)}` +
                            `/standings?after=${index}`);
    setPhase(final ? "final" : "standings");
    tv.parts.root.dataset.game = String(index);
    drawStandings(t, after, before, t.schedule.slice(0, index), final);
    signal(final ? "final" : "standings", {tournament: t.tournament_id, after: index,
      standings: after.standings.map((s) => s.bot),
      moves: after.standings.map((s, i) => ({bot: s.bot, rank: i + 1}))});
    announce(final ? `Final standings: ${after.standings.map((s) => s.bot).join(", ")}.`
                   : `Standings after game ${index}: ` +
                     `${after.standings.map((s) => s.bot).join(", ")}.`);
    return after.standings;
  }

  /** Follow tournament ``id`` from game ``from`` (an index in its schedule) to its end. */
  async function showTournament(id, from) {
    const parts = tv.parts;
    const path = `/api/tournaments/${encodeURIComponent(id)}`;
    parts.root.dataset.tournament = id;
    let t = await api(path);
    let before = from > 0 ? (await api(`${path}/standings?after=${from}`)).standings : [];
    for (let i = from; i < t.total; i++) {
      let game = t.schedule[i];
      while (game.status === "pending" && t.status === "running") {
        setPhase("waiting");
        parts.root.dataset.game = String(i + 1);
        parts.programme.replaceChildren(programme(t, i));
        parts.where.textContent = `Game ${i + 1} of ${t.total} starts once its bots are ` +
          `on the ladder: ${game.seats.join(", ")}`;
        await waitSeconds(AIR_POLL_MS / 1000);
        t = await api(path);
        game = t.schedule[i];
      }
      if (!game.match_id || game.status === "cancelled" || game.status === "pending") continue;
      parts.root.dataset.game = String(i + 1);
      const match = await api(`/api/matches/${encodeURIComponent(game.match_id)}`);
      const shown = await showMatch(match, programme(t, i), null);
      if (shown.ended) await waitSteps(RESULT_STEPS);
      t = await api(path);
      if (shown.unwatchable ||
          (t.schedule[i].match_id !== game.match_id && t.schedule[i].status !== "cancelled")) {
        i -= 1;  // not watchable yet, or its match was aborted and the game is played again
        continue;
      }
      const last = i + 1 === t.total;
      before = await showStandings(t, i + 1, before, last);
      if (!last) await waitSteps(STANDINGS_STEPS);
    }
    if (!t.total || parts.root.dataset.phase !== "final") {
      await showStandings(t, t.total, before, true);
    }
    tv.done.add(id);
    await waitSeconds(FINAL_HOLD_S);
  }

  /** What is on: the tournament and the game (a text node for the banner). */
  function programme(t, index) {
    return h("span", {}, h("strong", {}, `${gameName(t.game)} tournament`),
      ` ${t.tournament_id} · game `, h("span", {"data-testid": "tv-game-number"}, index + 1),
      ` of ${t.total}`);
  }

  // -- the programme: what is on air ------------------------------------------------------

  async function onAir() {
    try {
      return await api(`/api/tv?rewind=${REWIND_S}`);
    } catch (err) {
      tv.parts.onair.textContent = String(err.message || err);
      return null;
    }
  }

  /** Follow what is on air, for ever: a tournament from its first recent game to its end,
   * else one match after another, each to its end. */
  async function run() {
    for (;;) {
      const air = await onAir();
      if (air && air.kind === "tournament" && !tv.done.has(air.tournament.tournament_id)) {
        tv.parts.onair.textContent = "● Tournament";
        try {
          await showTournament(air.tournament.tournament_id, air.from_game);
        } catch (err) {
          tv.parts.onair.textContent = String(err.message || err);
          await waitSeconds(AIR_POLL_MS / 1000);
        }
        continue;
      }
      if (air && air.match && !tv.shown.has(air.match.id)) {
        delete tv.parts.root.dataset.tournament;
        tv.parts.onair.textContent = air.kind === "live" ? "● Live: the best-rated match"
                                                          : "The latest match";
        let stop = false, asked = performance.now();
        const cut = () => {  // a tournament coming on air takes over
          if (performance.now() - asked > AIR_POLL_MS) {
            asked = performance.now();
            onAir().then((now) => {
              if (now && now.kind === "tournament" &&
                  !tv.done.has(now.tournament.tournament_id)) stop = true;
            });
          }
          return stop;
        };
        const label = h("span", {}, h("strong", {}, gameName(air.match.game)),
                        ` match ${air.match.id}`);
        const shown = await showMatch(air.match, label, cut);
        if (!shown.unwatchable) tv.shown.add(air.match.id);
        if (shown.ended) await waitSteps(RESULT_STEPS * 2);
        continue;
      }
      if (!air || air.kind === "none") {
        setPhase("idle");
        tv.parts.programme.textContent = "Nothing on air yet";
        tv.parts.where.textContent = "The screen follows the next tournament or live " +
          "match by itself.";
      }
      await waitSeconds(AIR_POLL_MS / 1000);
    }
  }

  frame();
  document.addEventListener("keydown", keys);
  // Each game's table is drawn by its view: the views load first.
  gamesReady.catch((err) => console.warn(`no list of games: ${err.message}`)).then(run);
})();
