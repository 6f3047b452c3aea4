package bullring.kit;

import bullring.v2.BotServiceGrpc;
import bullring.v2.Action;
import bullring.v2.Answer;
import bullring.v2.Closed;
import bullring.v2.DecisionRequest;
import bullring.v2.Join;
import bullring.v2.MatchEnded;
import bullring.v2.MatchStarted;
import bullring.v2.PlayRequest;
import bullring.v2.PlayResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.LocalTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Plays a {@link Bot} over gRPC: joins a ladder with a registered bot's token (or plays the
 * one seat a seat token names), plays match after match on one stream, answers within the
 * time left less a margin, reconnects with backoff, and stops on SIGINT/SIGTERM (exit 0), on a
 * refused token (exit 3), when another connection replaced this one (exit 5) or after
 * {@code --give-up-after} seconds without a working connection (exit 4).
 */
public final class Runner {
    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final Object STREAM_DONE = new Object();

    private final Bot bot;
    private final String server;
    private final String token;
    private final String ladder;
    private final int matches;
    private final int marginMs;
    private final int giveUpAfterS;
    private final boolean verbose;

    private volatile boolean stopping;
    private volatile ManagedChannel channel;
    private final Object wakeUp = new Object();
    private ExecutorService thinker = newThinker();
    private final Map<String, Answer> answered = new HashMap<>();
    private String matchId = "";
    /** This bot's seat in {@code matchId}, from its MatchStarted. */
    private int seat = -1;
    private int played;
    private Outcome closedFor;
    private boolean seatMatchEnded;

    /** What ended one connection. */
    private enum Outcome { DONE, DROPPED, REFUSED_TOKEN, REPLACED, REFUSED }

    private Runner(Bot bot, Map<String, String> options) {
        this.bot = bot;
        this.server = options.getOrDefault("server", "127.0.0.1:50051");
        this.token = options.getOrDefault("token", System.getenv().getOrDefault("BULLRING_TOKEN", ""));
        this.ladder = options.getOrDefault("ladder", "");
        this.matches = Integer.parseInt(options.getOrDefault("matches", "0"));
        this.marginMs = Integer.parseInt(options.getOrDefault("margin-ms", "50"));
        this.giveUpAfterS = Integer.parseInt(options.getOrDefault("give-up-after", "60"));
        this.verbose = options.containsKey("verbose");
    }

    /**
     * Runs {@code bot} with the command line {@code args} and exits with the runner's status:
     * {@code --server HOST:PORT --token TOKEN [--ladder GAME] [--matches N] [--margin-ms 50]
     * [--give-up-after 60] [--verbose]}.
     */
    public static void main(Bot bot, String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String name = args[i].replaceFirst("^--", "");
            if (name.equals("verbose") || name.equals("v")) {
                options.put("verbose", "");
            } else if (args[i].startsWith("--") && i + 1 < args.length) {
                options.put(name, args[++i]);
            } else {
                System.err.println("usage: --server HOST:PORT --token TOKEN [--ladder GAME] "
                        + "[--matches N] [--margin-ms MS] [--give-up-after S] [--verbose]");
                System.exit(2);
            }
        }
        Runner runner = new Runner(bot, options);
        if (runner.token.isEmpty()) {
            System.err.println("no token: pass --token or set BULLRING_TOKEN");
            System.exit(2);
        }
        System.exit(runner.run());
    }

    private static ExecutorService newThinker() {
        return Executors.newSingleThreadExecutor(r -> {
            Thread thread = new Thread(r, "bot");
            thread.setDaemon(true);
            return thread;
        });
    }

    private static void log(String message) {
        System.err.println(LocalTime.now() + " " + message);
        System.err.flush();
    }

    private void debug(String message) {
        if (verbose) {
            log(message);
        }
    }

    @SuppressWarnings("restriction")
    private void onSignals() {
        for (String name : List.of("INT", "TERM")) {
            sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> {
                log("SIG" + name + ": stopping");
                stopping = true;
                ManagedChannel open = channel;
                if (open != null) {
                    open.shutdownNow();
                }
                synchronized (wakeUp) {
                    wakeUp.notifyAll();
                }
            });
        }
    }

    private int run() {
        onSignals();
        long backoffMs = 50;
        long lastWorking = System.nanoTime();
        while (!stopping) {
            log("connecting to " + server + (ladder.isEmpty() ? "" : " for the " + ladder + " ladder"));
            int before = played;
            Outcome outcome = playOnce();
            if (stopping) {
                break;
            }
            switch (outcome) {
                case DONE:
                    return 0;
                case REFUSED_TOKEN:
                    return 3;
                case REPLACED:
                    return 5;
                case REFUSED:
                    return 1;
                default:
                    break;
            }
            if (played > before || channelHeard) {
                backoffMs = 50;
                lastWorking = System.nanoTime();
            }
            if (System.nanoTime() - lastWorking > giveUpAfterS * 1_000_000_000L) {
                log("giving up: no working connection for " + giveUpAfterS + " s");
                return 4;
            }
            long pause = backoffMs / 2 + ThreadLocalRandom.current().nextLong(backoffMs / 2 + 1);
            log("reconnecting in " + pause + " ms");
            synchronized (wakeUp) {
                try {
                    if (!stopping) {
                        wakeUp.wait(pause);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return 0;
                }
            }
            backoffMs = Math.min(2000, backoffMs * 2);
        }
        return 0;
    }

    private boolean channelHeard;

    private Outcome playOnce() {
        channelHeard = false;
        BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
        ManagedChannel open = ManagedChannelBuilder.forTarget(server).usePlaintext().build();
        channel = open;
        try {
            Metadata headers = new Metadata();
            headers.put(AUTHORIZATION, "Bearer " + token);
            BotServiceGrpc.BotServiceStub stub = BotServiceGrpc.newStub(open)
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
            StreamObserver<PlayRequest> requests = stub.play(new StreamObserver<>() {
                @Override
                public void onNext(PlayResponse response) {
                    inbox.add(response);
                }

                @Override
                public void onError(Throwable error) {
                    inbox.add(error);
                }

                @Override
                public void onCompleted() {
                    inbox.add(STREAM_DONE);
                }
            });
            int left = matches > 0 ? matches - played : 0;
            requests.onNext(PlayRequest.newBuilder().setJoin(Join.newBuilder()
                    .setClient("bullring-java-kit").setLadder(ladder).setMatches(left)
                    .addAllGames(bot.games())).build());
            while (true) {
                Object item = inbox.take();
                if (item instanceof PlayResponse) {
                    channelHeard = true;
                    closedFor = null;
                    handle((PlayResponse) item, requests);
                    if (closedFor != null) {
                        requests.onCompleted();
                        return closedFor;
                    }
                } else if (item instanceof Throwable) {
                    return failed(Status.fromThrowable((Throwable) item));
                } else {
                    requests.onCompleted();
                    if ((matches > 0 && played >= matches) || (ladder.isEmpty() && seatMatchEnded)) {
                        return Outcome.DONE;
                    }
                    log("the server ended the stream");
                    return Outcome.DROPPED;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Outcome.DONE;
        } finally {
            open.shutdownNow();
        }
    }

    private Outcome failed(Status status) {
        String why = status.getCode() + (status.getDescription() == null ? "" : ": " + status.getDescription());
        if (stopping) {
            return Outcome.DONE;
        }
        switch (status.getCode()) {
            case UNAUTHENTICATED:
            case PERMISSION_DENIED:
                log("the server refused the token (" + why + "); not retrying");
                return Outcome.REFUSED_TOKEN;
            case INVALID_ARGUMENT:
            case FAILED_PRECONDITION:
            case NOT_FOUND:
                log("the server refused the connection (" + why + "); not retrying");
                return Outcome.REFUSED;
            default:
                break;
        }
        if (status.getDescription() != null && status.getDescription().contains("replaced")) {
            log("another connection took this bot's place (" + why + "); not retrying");
            return Outcome.REPLACED;
        }
        log("connection lost (" + why + ")");
        return Outcome.DROPPED;
    }

    private void handle(PlayResponse response, StreamObserver<PlayRequest> requests) {
        switch (response.getBodyCase()) {
            case BATCH:
                for (PlayResponse inner : response.getBatch().getMessagesList()) {
                    handle(inner, requests);
                }
                break;
            case LADDER_QUEUED:
                log("waiting on the " + response.getLadderQueued().getGame() + " ladder as "
                        + response.getLadderQueued().getBot());
                break;
            case MATCH_STARTED:
                MatchStarted started = response.getMatchStarted();
                if (!started.getMatchId().equals(matchId)) {
                    answered.clear();
                }
                matchId = started.getMatchId();
                seat = started.getSeat();
                log("match " + matchId + " started: " + started.getGame() + ", seat "
                        + started.getSeat() + " of " + started.getSeatNamesList());
                call("onMatchStarted", () -> bot.onMatchStarted(started));
                break;
            case DECISION:
                answer(response.getDecision(), System.nanoTime(), requests);
                break;
            case ACCEPTED:
                debug("accepted " + response.getAccepted().getDecisionId());
                break;
            case REJECTED:
                log("answer to " + response.getRejected().getDecisionId() + " rejected ("
                        + response.getRejected().getReason() + "): " + response.getRejected().getMessage());
                break;
            case EVENT:
                debug("event " + response.getEvent().toString().replace('\n', ' '));
                call("onEvent", () -> bot.onEvent(response.getEvent()));
                break;
            case MATCH_ENDED:
                MatchEnded ended = response.getMatchEnded();
                played++;
                seatMatchEnded = true;
                String termination = String.valueOf(ended.getTermination())
                        .replaceFirst("^TERMINATION_", "").toLowerCase(java.util.Locale.ROOT);
                String you = seat >= 0 && seat < ended.getTotalsCount() && seat < ended.getRanksCount()
                        ? "; you (seat " + seat + "): total " + ended.getTotals(seat) + ", rank "
                                + ended.getRanks(seat)
                        : "";
                System.out.println("match " + matchId + " ended: totals " + ended.getTotalsList()
                        + " ranks " + ended.getRanksList() + " (" + termination + ")" + you);
                System.out.flush();
                call("onMatchEnded", () -> bot.onMatchEnded(ended));
                break;
            case CLOSED:
                Closed closed = response.getClosed();
                switch (closed.getReason()) {
                    case CLOSE_REASON_REPLACED:
                        closedFor = Outcome.REPLACED;
                        break;
                    case CLOSE_REASON_TOKEN_REVOKED:
                    case CLOSE_REASON_BOT_DISABLED:
                        closedFor = Outcome.REFUSED_TOKEN;
                        break;
                    case CLOSE_REASON_MATCHES_PLAYED:
                        closedFor = Outcome.DONE;
                        break;
                    default:
                        break;
                }
                log("the server closed the connection (" + closed.getReason() + "): "
                        + closed.getMessage() + (closedFor == Outcome.DONE || closedFor == null
                        ? "" : "; not reconnecting"));
                break;
            default:
                log("a message this runner does not know: " + response.getBodyCase());
        }
    }

    private void call(String what, Runnable hook) {
        try {
            hook.run();
        } catch (RuntimeException e) {
            log("the bot's " + what + " threw:\n" + trace(e));
        }
    }

    private static String trace(Throwable error) {
        StringWriter text = new StringWriter();
        error.printStackTrace(new PrintWriter(text));
        return text.toString();
    }

    private void answer(DecisionRequest d, long receivedNs, StreamObserver<PlayRequest> requests) {
        String id = d.getDecisionId();
        Answer answer = answered.get(id);
        if (answer == null) {
            long budgetMs = d.getTimeLeftMs() - marginMs - (System.nanoTime() - receivedNs) / 1_000_000;
            Future<Answer> thought = thinker.submit(() -> decide(d));
            try {
                answer = thought.get(Math.max(budgetMs, 0), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                thought.cancel(true);
                thinker = newThinker();
                log("missed decision " + id + " (" + d.getKind() + "): the bot took more than "
                        + budgetMs + " ms; the server plays the default");
                return;
            } catch (ExecutionException e) {
                log("decision " + id + " (" + d.getKind() + "): the bot threw; the server plays "
                        + "the default action\n" + trace(e.getCause()));
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            answered.put(id, answer);
        }
        debug("decision " + id + " (" + d.getKind() + "): answering " + answer.toString().trim());
        requests.onNext(PlayRequest.newBuilder().setAnswer(answer).build());
    }

    /** The bot's answer to {@code d}: its action, and its comment when it has one to send. */
    private Answer decide(DecisionRequest d) {
        Action action = act(d);
        String comment;
        try {
            comment = bot.comment();
        } catch (RuntimeException e) {
            log("decision " + d.getDecisionId() + ": the bot's comment threw; answering without "
                    + "one\n" + trace(e));
            comment = "";
        }
        String problem = commentProblem(comment == null ? "" : comment);
        if (problem != null) {
            log("decision " + d.getDecisionId() + ": the comment is left out: " + problem);
            comment = "";
        }
        return Answer.newBuilder().setDecisionId(d.getDecisionId()).setAction(action)
                .setComment(comment == null ? "" : comment).build();
    }

    /** The longest comment an answer may carry ({@code Answer.comment}), in characters. */
    static final int MAX_COMMENT_CHARS = 200;

    /**
     * What the server would refuse in a comment (too long, a control character), or null if
     * it may be sent.
     */
    static String commentProblem(String comment) {
        int chars = comment.codePointCount(0, comment.length());
        if (chars > MAX_COMMENT_CHARS) {
            return "it has " + chars + " characters; at most " + MAX_COMMENT_CHARS + " are allowed";
        }
        int position = 0;
        for (int i = 0; i < comment.length(); i += Character.charCount(comment.codePointAt(i))) {
            int code = comment.codePointAt(i);
            if (Character.getType(code) == Character.CONTROL) {
                return String.format("it holds the control character U+%04X at position %d", code, position);
            }
            position++;
        }
        return null;
    }

    private Action act(DecisionRequest d) {
        switch (d.getKind()) {
            case DECISION_KIND_PLAY_CARD:
                return Action.newBuilder().setCard(bot.playCard(d)).build();
            case DECISION_KIND_CHOOSE_ROW:
                return Action.newBuilder().setRow(bot.chooseRow(d)).build();
            case DECISION_KIND_DRAFT_CARD:
                return Action.newBuilder().setCard(bot.draftCard(d)).build();
            case DECISION_KIND_TAKE_OR_PASS:
                return Action.newBuilder().setWord(bot.takeOrPass(d)).build();
            case DECISION_KIND_REVEAL_HIDDEN_CARD:
                return Action.newBuilder().setWord(bot.revealHiddenCard(d)).build();
            default:
                throw new IllegalArgumentException("a decision kind this runner does not know: " + d.getKind());
        }
    }
}
