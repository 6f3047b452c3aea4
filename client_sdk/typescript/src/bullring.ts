/**
 * The kit's runner: a `Bot` interface with one method per decision kind, and `run`, which
 * joins a ladder (or one match's seat) over BotService.Play and answers for the bot.
 *
 * What the runner does for the bot:
 * - sends `Join(ladder=GAME)` with the token in `authorization: Bearer TOKEN`, and plays
 *   one match after another on the stream (`--matches N` to stop after N);
 * - calls the bot's method for each decision and sends its answer, unless the time left
 *   less the margin has run out (the server then applies the default action);
 * - an exception in the bot's code is logged with its stack, the decision is not answered
 *   (the server applies the default action, docs/rules.md §3) and play goes on;
 * - reconnects with exponential backoff (50 ms doubling to 2 s, jittered) and resends an
 *   answer already given when a decision is asked again;
 * - stops on a `Closed` message or a refusal: exit 0 when the asked matches are played,
 *   3 when the token is refused, revoked or the bot disabled, 5 when a newer connection
 *   replaced this one, 4 after `--give-up-after` seconds without a connection, 1 on another
 *   refusal (such as a ladder this server does not run), 2 on bad arguments;
 * - exits 0 on SIGINT or SIGTERM.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  Action, Answer, DecisionRequest, MatchEnded, MatchStarted, NoThanksObservation, PACKAGE, PlayRequest,
  PlayResponse, PROTO_FILE, ProtoGrpcType, PublicEvent, SixNimmtObservation,
} from './contract';

export type { MatchEnded, MatchStarted, NoThanksObservation, PublicEvent, SixNimmtObservation };

/** A value or a promise of it: a bot's method may be synchronous or async. */
export type Awaitable<T> = T | Promise<T>;

/**
 * What a bot author writes: one method per decision kind. Each gets the seat's observation
 * and the legal answers, and returns one of them.
 */
export interface Bot {
  /** 6 nimmt!: the card to play from the hand. */
  playCard(obs: SixNimmtObservation, legal: number[]): Awaitable<number>;
  /** 6 nimmt!: the row (0..3) to take when the card is lower than every row's end. */
  chooseRow(obs: SixNimmtObservation, legal: number[]): Awaitable<number>;
  /** 6 nimmt! professional variant: the card to draft from the pool. */
  draftCard(obs: SixNimmtObservation, legal: number[]): Awaitable<number>;
  /** No Thanks!: "take" the face-up card or "pass" (pay a chip). */
  takeOrPass(obs: NoThanksObservation, legal: string[]): Awaitable<string>;
  /** No Thanks! hidden_card variant: "reveal" the hidden card or "keep" it. */
  revealHiddenCard(obs: NoThanksObservation, legal: string[]): Awaitable<string>;
  /**
   * Why, in the bot's own words, it chose the answer its decision method has just returned
   * (optional). The runner asks right after that method and sends the comment with the
   * answer; it is stored in the replay and shown beside the move once the move is public.
   * At most 200 characters, no control characters; '' sends none. A comment that throws, or
   * that the server would refuse, is logged and left out, and the answer goes without it.
   */
  comment?(): string;
  /** Called when a match starts (optional). */
  onMatchStarted?(match: MatchStarted): void;
  /** Called for each public event of the match (optional). */
  onEvent?(event: PublicEvent): void;
  /** Called when a match ends (optional). */
  onMatchEnded?(result: MatchEnded): void;
}

/** The longest comment an answer may carry (`Answer.comment`), in characters. */
export const MAX_COMMENT_CHARS = 200;

/** What the server would refuse in a comment (too long, a control character), or null. */
export function commentProblem(comment: string): string | null {
  const chars = [...comment];
  if (chars.length > MAX_COMMENT_CHARS) {
    return `it has ${chars.length} characters; at most ${MAX_COMMENT_CHARS} are allowed`;
  }
  const position = chars.findIndex((c) => /\p{Cc}/u.test(c));
  if (position >= 0) {
    const code = (chars[position].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
    return `it holds the control character U+${code} at position ${position}`;
  }
  return null;
}

/** The runner's settings, as the command line gives them. */
export interface Options {
  server: string;
  token: string;
  ladder: string | null;
  matches: number;
  marginMs: number;
  giveUpAfterS: number;
  verbose: boolean;
}

const CLIENT_NAME = 'bullring-typescript-kit/0.1.0';
const BACKOFF_START_MS = 50;
const BACKOFF_CAP_MS = 2000;
const RETRYABLE = new Set([grpc.status.UNAVAILABLE, grpc.status.CANCELLED, grpc.status.INTERNAL,
  grpc.status.UNKNOWN, grpc.status.DEADLINE_EXCEEDED]);
const REFUSED_TOKEN = new Set([grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED]);

const USAGE = `usage: node dist/bot.js --server HOST:PORT --token TOKEN [options]

  --server HOST:PORT       the referee server's gRPC address (default: $BULLRING_SERVER)
  --token TOKEN            a registered bot's token, or a match seat's (default: $BULLRING_TOKEN)
  --ladder GAME            the ladder to join: six_nimmt or no_thanks (default: $BULLRING_LADDER;
                           without one the token must be a match seat's)
  --matches N              with --ladder: stop after N matches (default 0: never)
  --margin-ms N            answer at least N ms before the deadline (default 50)
  --give-up-after SECONDS  stop reconnecting after this long without a connection (default 60)
  --verbose                also log every answer, verdict and event`;

/** A problem with the command line. */
class UsageError extends Error {}

/** Parse the command line (and the BULLRING_* environment variables). */
export function parseArgs(argv: string[], env: NodeJS.ProcessEnv): Options {
  const opts: Options = {
    server: env.BULLRING_SERVER ?? '', token: env.BULLRING_TOKEN ?? '',
    ladder: env.BULLRING_LADDER || null, matches: 0, marginMs: 50, giveUpAfterS: 60,
    verbose: false,
  };
  const number = (name: string, text: string): number => {
    const n = Number(text);
    if (text === '' || !Number.isFinite(n) || n < 0) {
      throw new UsageError(`${name} wants a number >= 0, not ${JSON.stringify(text)}`);
    }
    return n;
  };
  const setters: Record<string, (v: string) => void> = {
    '--server': (v) => { opts.server = v; },
    '--token': (v) => { opts.token = v; },
    '--ladder': (v) => { opts.ladder = v || null; },
    '--matches': (v) => { opts.matches = number('--matches', v); },
    '--margin-ms': (v) => { opts.marginMs = number('--margin-ms', v); },
    '--give-up-after': (v) => { opts.giveUpAfterS = number('--give-up-after', v); },
  };
  for (let i = 0; i < argv.length; i += 1) {
    const [flag, inline] = argv[i].includes('=') ? [argv[i].slice(0, argv[i].indexOf('=')),
      argv[i].slice(argv[i].indexOf('=') + 1)] : [argv[i], null];
    if (flag === '-h' || flag === '--help') throw new UsageError(USAGE);
    if (flag === '-v' || flag === '--verbose') {
      opts.verbose = true;
      continue;
    }
    const set = setters[flag];
    if (set === undefined) throw new UsageError(`unknown argument ${JSON.stringify(argv[i])}\n${USAGE}`);
    let value = inline;
    if (value === null) {
      i += 1;
      if (i >= argv.length) throw new UsageError(`${flag} needs a value`);
      value = argv[i];
    }
    set(value);
  }
  if (!opts.server) throw new UsageError(`--server HOST:PORT is required\n${USAGE}`);
  if (!opts.token) throw new UsageError(`a token is required (--token or $BULLRING_TOKEN)\n${USAGE}`);
  return opts;
}

/** Log lines on stderr: time, level, message. */
class Log {
  constructor(private readonly verbose: boolean) {}

  private say(level: string, message: string): void {
    process.stderr.write(`${new Date().toISOString()} ${level} bullring: ${message}\n`);
  }

  info(message: string): void { this.say('INFO', message); }

  warn(message: string): void { this.say('WARNING', message); }

  error(message: string): void { this.say('ERROR', message); }

  debug(message: string): void { if (this.verbose) this.say('DEBUG', message); }
}

/** How one connection ended: stop with an exit status, or reconnect. */
type Outcome = { exit: number } | { retry: string, connected: boolean };

/** The value an Action carries (a card, a row or a word). */
function actionValue(action: Action): number | string | undefined {
  return action.value === undefined ? undefined : action[action.value] ?? undefined;
}

/** How a match ended, as a word: "normal" or "aborted" (TERMINATION_NORMAL gives "normal"). */
function termination(value: unknown): string {
  return String(value).replace(/^TERMINATION_/, '').toLowerCase();
}

/** A promise that rejects with `TimeoutError` after `ms`, or settles with `work`. */
class TimeoutError extends Error {}
function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError()), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Plays for one bot: the state that lives across reconnects. */
class Runner {
  private readonly log: Log;
  private readonly client: grpc.Client & { Play(metadata: grpc.Metadata): grpc.ClientDuplexStream<PlayRequest, PlayResponse> };
  private call: grpc.ClientDuplexStream<PlayRequest, PlayResponse> | null = null;
  private matchId: string | null = null;
  /** This bot's seat in matchId, from its MatchStarted. */
  private seat = -1;
  private answers = new Map<string, Answer>();
  private played = 0;
  private stopped = false;
  private wake: (() => void) | null = null;

  constructor(private readonly bot: Bot, private readonly opts: Options) {
    this.log = new Log(opts.verbose);
    const definition = protoLoader.loadSync(PROTO_FILE, {
      keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true,
    });
    const proto = grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
    // gRPC's own reconnect backoff is kept as short as the runner's, which does the backing off.
    this.client = new proto.bullring[PACKAGE].BotService(opts.server, grpc.credentials.createInsecure(), {
      'grpc.initial_reconnect_backoff_ms': BACKOFF_START_MS,
      'grpc.max_reconnect_backoff_ms': BACKOFF_CAP_MS,
    });
  }

  /** Stop at once (a signal): cancel the stream and any wait. */
  stop(signal: string): void {
    this.log.info(`${signal}: stopping`);
    this.stopped = true;
    this.call?.cancel();
    this.wake?.();
  }

  /** Connect, play, reconnect with backoff; resolve with the exit status. */
  async run(): Promise<number> {
    let failures = 0;
    let lastConnected = Date.now();
    this.log.info(`connecting to ${this.opts.server}` +
      (this.opts.ladder ? ` to play the ${this.opts.ladder} ladder` : ''));
    for (;;) {
      const outcome = await this.connection();
      if (this.stopped) return 0;
      if ('exit' in outcome) return outcome.exit;
      if (outcome.connected) {
        failures = 0;
        lastConnected = Date.now();
      }
      failures += 1;
      if (Date.now() - lastConnected > this.opts.giveUpAfterS * 1000) {
        this.log.error(`giving up: no connection for ${this.opts.giveUpAfterS} s (${outcome.retry})`);
        return 4;
      }
      const delay = Math.min(BACKOFF_CAP_MS, BACKOFF_START_MS * 2 ** (failures - 1)) * (0.5 + Math.random() / 2);
      this.log.warn(`connection lost (${outcome.retry}); reconnecting in ${Math.round(delay)} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wake = () => { clearTimeout(timer); resolve(); };
      });
      this.wake = null;
      if (this.stopped) return 0;
    }
  }

  /** One Play stream, from Join to its end. */
  private connection(): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      const metadata = new grpc.Metadata();
      metadata.set('authorization', `Bearer ${this.opts.token}`);
      const call = this.client.Play(metadata);
      this.call = call;
      let connected = false;
      let closed: { reason: string, message: string } | null = null;
      let settled = false;
      const finish = (outcome: Outcome): void => {
        if (settled) return;
        settled = true;
        this.call = null;
        resolve(outcome);
      };
      const send = (request: PlayRequest): void => {
        if (!settled && call.writable) call.write(request);
      };
      call.on('data', (response: PlayResponse) => {
        connected = true;
        for (const message of response.body === 'batch' ? response.batch?.messages ?? [] : [response]) {
          if (message.body === 'closed' && message.closed) {
            closed = { reason: message.closed.reason, message: message.closed.message };
            this.log.info(`the server closed the stream: ${closed.reason} (${closed.message})`);
          } else {
            const done = this.handle(message, send);
            if (done) {
              call.end();
              finish({ exit: 0 });
            }
          }
        }
      });
      call.on('error', () => { /* the status says it all, below */ });
      call.on('status', (status: grpc.StatusObject) => {
        finish(this.outcome(status, closed, connected));
      });
      const remaining = this.opts.matches > 0 ? this.opts.matches - this.played : 0;
      send({ join: { client: CLIENT_NAME, accept_batches: true, ladder: this.opts.ladder ?? '', matches: remaining } });
    });
  }

  /** What to do once a stream has ended. */
  private outcome(status: grpc.StatusObject, closed: { reason: string, message: string } | null,
                  connected: boolean): Outcome {
    if (this.stopped) return { exit: 0 };
    switch (closed?.reason) {
      case 'CLOSE_REASON_REPLACED':
        this.log.error('a newer connection with this token took over; stopping (two runners on one token would take turns)');
        return { exit: 5 };
      case 'CLOSE_REASON_TOKEN_REVOKED':
      case 'CLOSE_REASON_BOT_DISABLED':
        this.log.error(`this token plays no more (${closed.reason}: ${closed.message})`);
        return { exit: 3 };
      case 'CLOSE_REASON_MATCHES_PLAYED':
        this.log.info(`played the ${this.played} matches asked for`);
        return { exit: 0 };
      default:
        break;
    }
    const what = `${grpc.status[status.code]}: ${status.details}`;
    if (status.code === grpc.status.OK) {
      if (this.opts.matches > 0 && this.played >= this.opts.matches) return { exit: 0 };
      return { retry: 'the server ended the stream', connected };
    }
    if (REFUSED_TOKEN.has(status.code)) {
      this.log.error(`the token was refused (${what})`);
      return { exit: 3 };
    }
    if (status.code === grpc.status.ABORTED) {
      this.log.error(`stopping: ${what}`);
      return { exit: 5 };
    }
    if (RETRYABLE.has(status.code)) return { retry: what, connected };
    this.log.error(`the server refused: ${what}`);
    return { exit: status.code === grpc.status.INVALID_ARGUMENT ? 2 : 1 };
  }

  /** Act on one server message; return true when this seat's only match has ended. */
  private handle(message: PlayResponse, send: (request: PlayRequest) => void): boolean {
    switch (message.body) {
      case 'ladder_queued':
        this.log.info(`waiting on the ${message.ladder_queued?.game} ladder as ${message.ladder_queued?.bot}`);
        return false;
      case 'match_started': {
        const started = message.match_started as MatchStarted;
        this.seat = started.seat;
        if (started.match_id === this.matchId) {
          this.log.info(`resumed match ${started.match_id}, seat ${started.seat}`);
          return false;
        }
        this.matchId = started.match_id;
        this.answers.clear();
        this.log.info(`match ${started.match_id} started: ${started.game}, seat ${started.seat} of [${started.seat_names.join(', ')}]`);
        this.guard('onMatchStarted', () => this.bot.onMatchStarted?.(started));
        return false;
      }
      case 'decision': {
        const request = message.decision as DecisionRequest;
        void this.decide(request, Date.now()).then((answer) => {
          if (answer !== null) send({ answer });
        });
        return false;
      }
      case 'accepted':
        this.log.debug(`answer to ${message.accepted?.decision_id} accepted`);
        return false;
      case 'rejected': {
        const r = message.rejected;
        this.log.warn(`answer to ${r?.decision_id} rejected (${r?.reason}): ${r?.message}`);
        return false;
      }
      case 'event': {
        const event = message.event as PublicEvent;
        this.log.debug(`event ${JSON.stringify(event)}`);
        this.guard('onEvent', () => this.bot.onEvent?.(event));
        return false;
      }
      case 'match_ended': {
        const ended = message.match_ended as MatchEnded;
        this.played += 1;
        const seat = this.seat;
        const you = seat >= 0 && seat < ended.totals.length && seat < ended.ranks.length
          ? `; you (seat ${seat}): total ${ended.totals[seat]}, rank ${ended.ranks[seat]}` : '';
        process.stdout.write(`match ${this.matchId} ended: totals [${ended.totals.join(', ')}] ` +
          `ranks [${ended.ranks.join(', ')}] (${termination(ended.termination)})${you}\n`);
        this.guard('onMatchEnded', () => this.bot.onMatchEnded?.(ended));
        return this.opts.ladder === null;
      }
      default:
        this.log.warn(`unknown message ${JSON.stringify(message)}; ignored`);
        return false;
    }
  }

  /** Call a notification method of the bot; log what it throws. */
  private guard(name: string, call: () => void): void {
    try {
      call();
    } catch (e) {
      this.log.error(`the bot's ${name} raised: ${e instanceof Error ? e.stack : String(e)}`);
    }
  }

  /** Ask the bot for one decision; the Answer to send, or null to leave it to the default. */
  private async decide(request: DecisionRequest, received: number): Promise<Answer | null> {
    const id = request.decision_id;
    const kind = request.kind;
    const given = this.answers.get(id);
    if (given !== undefined) {
      this.log.info(`decision ${id} asked again; sending the same answer`);
      return given;
    }
    const budget = request.time_left_ms - this.opts.marginMs - (Date.now() - received);
    if (budget <= 0) {
      this.log.warn(`missed decision ${id} (${kind}): only ${request.time_left_ms} ms left, margin ${this.opts.marginMs} ms`);
      return null;
    }
    const legal = request.legal.map(actionValue);
    let chosen: number | string;
    let comment: string;
    try {
      [chosen, comment] = await within(this.ask(request, legal), budget);
    } catch (e) {
      if (e instanceof TimeoutError) {
        this.log.warn(`missed decision ${id} (${kind}): the bot did not answer within ${Math.round(budget)} ms; the server applies the default action`);
      } else {
        this.log.error(`the bot raised on decision ${id} (${kind}); not answered, the server applies the default action\n${e instanceof Error ? e.stack : String(e)}`);
      }
      return null;
    }
    const index = legal.indexOf(chosen);
    if (index < 0) {
      this.log.error(`decision ${id} (${kind}): the bot answered ${JSON.stringify(chosen)}, not one of ${JSON.stringify(legal)}; not answered, the server applies the default action`);
      return null;
    }
    const action = request.legal[index];
    const field = action.value as 'card' | 'row' | 'word';
    const plain = { [field]: action[field] } as unknown as Action;
    const problem = commentProblem(comment);
    if (problem !== null) {
      this.log.warn(`decision ${id}: the comment ${JSON.stringify(comment)} is left out: ${problem}`);
      comment = '';
    }
    const answer: Answer = { decision_id: id, action: plain, comment };
    this.answers.set(id, answer);
    this.log.debug(`decision ${id} (${kind}): answered ${JSON.stringify(chosen)}${comment ? ` (${JSON.stringify(comment)})` : ''}`);
    return answer;
  }

  /** Call the bot's method for the request's kind, then its comment on the answer. */
  private async ask(request: DecisionRequest, legal: (number | string | undefined)[]): Promise<[number | string, string]> {
    const chosen = await this.choose(request, legal);
    if (this.bot.comment === undefined) return [chosen, ''];
    try {
      return [chosen, String(this.bot.comment() ?? '')];
    } catch (e) {
      this.log.error(`decision ${request.decision_id}: the bot's comment raised; answering without one\n${e instanceof Error ? e.stack : String(e)}`);
      return [chosen, ''];
    }
  }

  /** Call the bot's method for the request's kind. */
  private async choose(request: DecisionRequest, legal: (number | string | undefined)[]): Promise<number | string> {
    const cards = legal as number[];
    const words = legal as string[];
    const sixNimmt = request.six_nimmt as SixNimmtObservation;
    const noThanks = request.no_thanks as NoThanksObservation;
    switch (request.kind) {
      case 'DECISION_KIND_PLAY_CARD': return this.bot.playCard(sixNimmt, cards);
      case 'DECISION_KIND_CHOOSE_ROW': return this.bot.chooseRow(sixNimmt, cards);
      case 'DECISION_KIND_DRAFT_CARD': return this.bot.draftCard(sixNimmt, cards);
      case 'DECISION_KIND_TAKE_OR_PASS': return this.bot.takeOrPass(noThanks, words);
      case 'DECISION_KIND_REVEAL_HIDDEN_CARD': return this.bot.revealHiddenCard(noThanks, words);
      default: throw new Error(`unknown decision kind ${request.kind}`);
    }
  }
}

/**
 * Run `bot` as the command line says (see USAGE): play until told to stop, then exit the
 * process with the runner's status.
 */
export function run(bot: Bot): void {
  let opts: Options;
  try {
    opts = parseArgs(process.argv.slice(2), process.env);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exit(e.message === USAGE ? 0 : 2);
  }
  const runner = new Runner(bot, opts);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => runner.stop(signal));
  }
  runner.run().then((code) => process.exit(code), (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  });
}
