#!/usr/bin/env node
'use strict';
/**
 * A Bullring bot in Node.js: plays one seat of a match over BotService.Play.
 *
 *   node bot.js --server HOST:PORT --token TOKEN [--ladder GAME [--matches N]]
 *               [--proto FILE] [--margin-ms N] [--give-up-after SECONDS] [--verbose]
 *               [--send-illegal-first]
 *
 * The protocol is the Python SDK's (client_sdk/runner.py): the seat's token goes in the
 * `authorization: Bearer TOKEN` metadata; the bot opens the bidirectional Play stream,
 * sends Join, then answers each DecisionRequest with an Answer echoing its decision_id.
 * A rejected answer is logged and, while the decision is still pending, answered again
 * with another legal action. A dropped connection is re-opened into the same seat with
 * exponential backoff; a decision the server asks again gets the same answer.
 *
 * With a registered bot's token, --ladder GAME joins that game's ladder instead of one
 * match's seat: the same stream carries one match after another until N have ended.
 *
 * Exit status: 0 the match ended (the result line is printed on stdout); 2 bad arguments
 * or a request the server called invalid; 3 the token was refused; 4 gave up reconnecting;
 * 1 any other refusal.
 */

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const strategy = require('./strategy');

const DEFAULT_PROTO = path.resolve(__dirname, '..', '..', 'proto', 'bullring', 'v2', 'referee.proto');
const CLIENT_NAME = 'bullring-node-bot/0.1.0';
const RETRYABLE = new Set([
  grpc.status.UNAVAILABLE, grpc.status.CANCELLED, grpc.status.DEADLINE_EXCEEDED,
  grpc.status.INTERNAL, grpc.status.UNKNOWN,
]);
const BACKOFF_START_MS = 50;
const BACKOFF_CAP_MS = 2000;
const MAX_RETRIES = 3; // answers sent again for one decision after rejections

const USAGE = `usage: node bot.js --server HOST:PORT --token TOKEN [options]

  --server HOST:PORT       the referee server's gRPC address (required)
  --token TOKEN            the seat's token (default: $BULLRING_TOKEN)
  --ladder GAME            play GAME's ladder (a registered bot's token) instead of one seat
  --matches N              with --ladder: stop after N matches (default 0: never)
  --proto FILE             the wire contract (default: the repo's proto/bullring/v2/referee.proto)
  --margin-ms N            answer at least N ms before the deadline (default: 50)
  --give-up-after SECONDS  stop reconnecting after this long without a connection (default: 60)
  --verbose                also log events and verdicts
  --send-illegal-first     (for tests) answer the first decision with an illegal action once,
                           to exercise the rejection path`;

/** Parse argv into options; throw an Error with a message on bad arguments. */
function parseArgs(argv) {
  const opts = {
    server: null, token: process.env.BULLRING_TOKEN || null, proto: DEFAULT_PROTO,
    marginMs: 50, giveUpAfterS: 60, verbose: false, sendIllegalFirst: false,
    ladder: null, matches: 0,
  };
  const takesValue = {
    '--server': (v) => { opts.server = v; },
    '--token': (v) => { opts.token = v; },
    '--proto': (v) => { opts.proto = path.resolve(v); },
    '--margin-ms': (v) => { opts.marginMs = number(v, '--margin-ms'); },
    '--give-up-after': (v) => { opts.giveUpAfterS = number(v, '--give-up-after'); },
    '--ladder': (v) => { opts.ladder = v; },
    '--matches': (v) => { opts.matches = number(v, '--matches'); },
  };
  for (let i = 0; i < argv.length; i += 1) {
    let arg = argv[i];
    let value = null;
    if (arg.includes('=')) [arg, value] = [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)];
    if (arg === '-h' || arg === '--help') {
      opts.help = true;
    } else if (arg === '-v' || arg === '--verbose') {
      opts.verbose = true;
    } else if (arg === '--send-illegal-first') {
      opts.sendIllegalFirst = true;
    } else if (takesValue[arg]) {
      if (value === null) {
        i += 1;
        if (i >= argv.length) throw new Error(`${arg} needs a value`);
        value = argv[i];
      }
      takesValue[arg](value);
    } else {
      throw new Error(`unknown argument ${JSON.stringify(argv[i])}`);
    }
  }
  if (opts.help) return opts;
  if (!opts.server) throw new Error('--server HOST:PORT is required');
  if (!opts.token) throw new Error('a token is required (--token or $BULLRING_TOKEN)');
  return opts;
}

function number(text, name) {
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} wants a number >= 0, not ${JSON.stringify(text)}`);
  return n;
}

/** A Termination enum name (TERMINATION_NORMAL) as a word (normal). */
function terminationName(termination) {
  return String(termination).replace(/^TERMINATION_/, '').toLowerCase();
}

/** Load the BotService client constructor from the proto file, at run time. */
function loadBotService(protoFile) {
  const definition = protoLoader.loadSync(protoFile, {
    keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true,
  });
  return grpc.loadPackageDefinition(definition).bullring.v2.BotService;
}

function logger(verbose) {
  const say = (level, message) => process.stderr.write(`${new Date().toISOString()} ${level} bullring.node-bot: ${message}\n`);
  return {
    info: (m) => say('INFO', m),
    warn: (m) => say('WARNING', m),
    error: (m) => say('ERROR', m),
    debug: (m) => { if (verbose) say('DEBUG', m); },
  };
}

/** The oneof member of a decoded Action as a fresh Action message: {card}, {row} or {word}. */
function plainAction(action) {
  const which = action.value || ['card', 'row', 'word'].find((k) => action[k] !== undefined);
  return { [which]: action[which] };
}

/** Everything that survives reconnects: the match, the pending requests, the answers given. */
class Seat {
  constructor(opts, log) {
    this.opts = opts;
    this.log = log;
    this.matchId = null;
    this.answers = new Map(); // decision_id → Action sent (resent if the decision is asked again)
    this.requests = new Map(); // decision_id → DecisionRequest still without an accepted answer
    this.retries = new Map(); // decision_id → answers sent again after a rejection
    this.illegalSent = false;
    this.ended = null; // the last MatchEnded
    this.played = 0; // matches ended
    this.done = false; // one match ended, or --matches of the ladder
  }

  /** Act on one PlayResponse; return the Answer to send, or null. */
  handle(response, receivedAt) {
    switch (response.body) {
      case 'match_started': {
        const s = response.match_started;
        if (this.matchId === s.match_id) {
          this.log.info(`resumed match ${s.match_id}, seat ${s.seat}`);
        } else {
          this.matchId = s.match_id;
          this.answers.clear();
          this.requests.clear();
          this.retries.clear();
          this.log.info(`match ${s.match_id} started: ${s.game}, seat ${s.seat} of [${s.seat_names.join(', ')}]`);
        }
        return null;
      }
      case 'decision':
        return this.decide(response.decision, receivedAt);
      case 'accepted':
        this.log.debug(`answer to decision ${response.accepted.decision_id} accepted`);
        this.requests.delete(response.accepted.decision_id);
        return null;
      case 'rejected':
        return this.rejected(response.rejected);
      case 'event': {
        // A typed event: PublicEvent.game names the game, its message's oneof the event.
        const game = response.event.game;
        const typed = game ? response.event[game] : null;
        const name = typed ? typed.event : null;
        this.log.debug(`event ${game}.${name} ${JSON.stringify(name ? typed[name] : null)}`);
        return null;
      }
      case 'match_ended': {
        const e = response.match_ended;
        this.ended = e;
        this.played += 1;
        this.done = this.opts.ladder === null || (this.opts.matches > 0 && this.played >= this.opts.matches);
        if (this.opts.ladder !== null) {
          this.log.info(`match ${this.matchId} ended: totals [${e.totals.join(', ')}] ranks [${e.ranks.join(', ')}] (${terminationName(e.termination)}); ${this.played} played`);
        }
        return null;
      }
      case 'ladder_queued':
        this.log.info(`waiting on the ${response.ladder_queued.game} ladder as ${response.ladder_queued.bot}`);
        return null;
      default:
        this.log.warn(`unknown message ${JSON.stringify(response)}; ignored`);
        return null;
    }
  }

  decide(request, receivedAt) {
    const id = request.decision_id;
    if (this.matchId === null) {
      this.log.warn(`decision ${id} came before MatchStarted; ignored`);
      return null;
    }
    if (this.answers.has(id)) {
      this.log.info(`decision ${id} asked again; sending the same answer`);
      return { decision_id: id, action: this.answers.get(id) };
    }
    this.requests.set(id, request);
    if (this.opts.sendIllegalFirst && !this.illegalSent) {
      this.illegalSent = true;
      const bad = strategy.illegal(request);
      this.log.info(`decision ${id}: sending the illegal action ${JSON.stringify(bad)} on purpose`);
      return { decision_id: id, action: bad };
    }
    const action = plainAction(strategy.choose(request));
    const spentMs = Date.now() - receivedAt;
    if (request.time_left_ms - this.opts.marginMs - spentMs <= 0) {
      this.log.warn(`missed decision ${id} (${request.kind}): only ${request.time_left_ms} ms were left`);
      return null;
    }
    this.answers.set(id, action);
    return { decision_id: id, action };
  }

  rejected(verdict) {
    const id = verdict.decision_id;
    this.log.warn(`answer to decision ${id} rejected (${verdict.reason}): ${verdict.message}`);
    this.answers.delete(id);
    const request = this.requests.get(id);
    if (!request || verdict.reason === 'REJECT_REASON_NOT_PENDING') {
      this.requests.delete(id);
      return null; // too late or unknown: nothing left to answer
    }
    // Still pending: answer again with a legal action straight from the request; should
    // even that be refused, try the other legal actions, a few times at most.
    const attempt = (this.retries.get(id) || 0) + 1;
    this.retries.set(id, attempt);
    if (attempt > MAX_RETRIES) {
      this.log.error(`decision ${id}: ${MAX_RETRIES} answers rejected; leaving it to the default action`);
      return null;
    }
    const legal = request.legal;
    const action = attempt === 1 ? plainAction(strategy.choose(request))
      : plainAction(legal[(attempt - 1) % legal.length]);
    this.answers.set(id, action);
    this.log.info(`decision ${id}: answering again with ${JSON.stringify(action)}`);
    return { decision_id: id, action };
  }
}

/** One Play stream: resolves {ended, heard} when it ends, rejects with the call's error. */
function playOnce(client, seat, metadata) {
  return new Promise((resolve, reject) => {
    let heard = false;
    const call = client.Play(metadata);
    call.on('data', (response) => {
      heard = true;
      const answer = seat.handle(response, Date.now());
      if (answer !== null) call.write({ answer });
      if (seat.done) {
        // Done: a ladder stream stays open for the next match, so close it from this side.
        resolve({ heard });
        call.cancel();
      }
    });
    call.on('error', (err) => {
      if (seat.done) resolve({ heard }); // the stream closing after the end is fine
      else { err.heard = heard; reject(err); }
    });
    call.on('end', () => resolve({ heard }));
    call.write({ join: seat.opts.ladder === null ? { client: CLIENT_NAME }
      : { client: CLIENT_NAME, ladder: seat.opts.ladder,
        // the matches still to play: the server seats the bot in no more than that
        matches: seat.opts.matches > 0 ? seat.opts.matches - seat.played : 0 } });
  });
}

function waitForReady(client, deadlineMs) {
  return new Promise((resolve) => {
    client.waitForReady(new Date(deadlineMs), (err) => resolve(err ? err.message : null));
  });
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

class Refused extends Error {
  constructor(message, exitCode) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** Play the seat until MatchEnded, reconnecting on transient failures; return the Seat. */
async function play(opts, log) {
  const BotService = loadBotService(opts.proto);
  const client = new BotService(opts.server, grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 20000,
    'grpc.keepalive_permit_without_calls': 1,
  });
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${opts.token}`);
  const seat = new Seat(opts, log);
  const giveUpMs = opts.giveUpAfterS * 1000;
  let downSince = Date.now();
  let failures = 0;
  let lastError = 'no attempt yet';
  try {
    for (;;) {
      if (Date.now() - downSince >= giveUpMs) {
        throw new Refused(`gave up on ${opts.server} after ${opts.giveUpAfterS} s without a connection; last error: ${lastError}`, 4);
      }
      log.info(`connecting to ${opts.server}${failures ? `, attempt ${failures + 1}` : ''}`);
      const notReady = await waitForReady(client, downSince + giveUpMs);
      let heard = false;
      if (notReady !== null) {
        lastError = `cannot connect: ${notReady}`;
      } else {
        try {
          ({ heard } = await playOnce(client, seat, metadata));
          if (seat.done) return seat;
          lastError = 'the stream ended before MatchEnded';
        } catch (err) {
          heard = Boolean(err.heard);
          if (!RETRYABLE.has(err.code)) throw refusal(err);
          lastError = `${grpc.status[err.code]}: ${err.details}`;
        }
      }
      if (heard) {
        downSince = Date.now();
        failures = 0;
      }
      failures += 1;
      const remaining = giveUpMs - (Date.now() - downSince);
      const delay = Math.max(0, Math.min(remaining,
        Math.min(BACKOFF_CAP_MS, BACKOFF_START_MS * 2 ** (failures - 1)) * (0.5 + Math.random() / 2)));
      log.warn(`connection to ${opts.server} failed (${lastError}); reconnecting in ${(delay / 1000).toFixed(2)} s`);
      await sleep(delay);
    }
  } finally {
    client.close();
  }
}

function refusal(err) {
  const name = grpc.status[err.code];
  if (err.code === grpc.status.UNAUTHENTICATED || err.code === grpc.status.PERMISSION_DENIED) {
    return new Refused(`the server refused the token (${name}): ${err.details}`, 3);
  }
  if (err.code === grpc.status.INVALID_ARGUMENT || err.code === grpc.status.RESOURCE_EXHAUSTED) {
    return new Refused(`the server refused a request (${name}): ${err.details}`, 2);
  }
  return new Refused(`the server refused to play (${name}): ${err.details}`, 1);
}

async function main(argv) {
  let opts;
  try {
    opts = parseArgs(argv);
  } catch (err) {
    process.stderr.write(`bullring node bot: ${err.message}\n${USAGE}\n`);
    return 2;
  }
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const log = logger(opts.verbose);
  try {
    const seat = await play(opts, log);
    const { totals, ranks, termination } = seat.ended;
    process.stdout.write(`match ${seat.matchId} ended: totals [${totals.join(', ')}] ranks [${ranks.join(', ')}] (${terminationName(termination)})\n`);
    return 0;
  } catch (err) {
    if (err instanceof Refused) {
      process.stderr.write(`bullring node bot: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (err) => {
    process.stderr.write(`bullring node bot: ${err.stack || err}\n`);
    process.exitCode = 1;
  });
}

module.exports = { parseArgs, loadBotService, Seat, plainAction, main };
