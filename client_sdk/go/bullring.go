// The kit's runner: the Bot interface, one method per decision kind, and Run, which joins a
// ladder (or one match's seat) over BotService.Play and answers for the bot.
//
// What the runner does for the bot:
//   - sends Join(ladder=GAME) with the token in "authorization: Bearer TOKEN" and plays one
//     match after another on the stream (-matches N to stop after N);
//   - calls the bot's method for each decision and sends its answer, unless the time left
//     less the margin runs out first (the server then applies the default action);
//   - a panic in the bot's code is logged with its stack, the decision is not answered (the
//     server applies the default action, docs/rules.md §3) and play goes on;
//   - reconnects with exponential backoff (50 ms doubling to 2 s, jittered) and resends an
//     answer already given when a decision is asked again;
//   - stops on a Closed message or a refusal: exit 0 when the asked matches are played, 3
//     when the token is refused, revoked or the bot disabled, 5 when a newer connection
//     replaced this one, 4 after -give-up-after seconds without a connection, 1 on another
//     refusal (such as a ladder this server does not run), 2 on bad arguments;
//   - exits 0 on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	pb "bullring/v2"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Bot is what a bot author writes. Each method gets what the seat may know and the legal
// answers, and returns one of them.
type Bot interface {
	// PlayCard (6 nimmt!): the card to play from the hand.
	PlayCard(obs *pb.SixNimmtObservation, legal []int32) int32
	// ChooseRow (6 nimmt!): the row (0..3) to take when the card is lower than every row's end.
	ChooseRow(obs *pb.SixNimmtObservation, legal []int32) int32
	// DraftCard (6 nimmt! professional variant): the card to draft from the pool.
	DraftCard(obs *pb.SixNimmtObservation, legal []int32) int32
	// TakeOrPass (No Thanks!): "take" the face-up card or "pass" (pay a chip).
	TakeOrPass(obs *pb.NoThanksObservation, legal []string) string
	// RevealHiddenCard (No Thanks! hidden_card variant): "reveal" the hidden card or "keep" it.
	RevealHiddenCard(obs *pb.NoThanksObservation, legal []string) string
}

// Commenter is optional: a Bot that also has Comment says why, in its own words, it chose
// the answer its decision method has just returned. The runner asks right after that
// method, on the same goroutine, and sends the comment with the answer; it is stored in the
// replay and shown beside the move once the move is public. At most 200 characters, no
// control characters; "" sends none (a comment that panics, or that the server would refuse,
// is logged and left out, and the answer goes without it).
type Commenter interface {
	Comment() string
}

// maxCommentChars is the longest comment an answer may carry (Answer.comment).
const maxCommentChars = 200

// commentProblem says what the server would refuse in a comment (not UTF-8, too long, a
// control character), or "" if it may be sent.
func commentProblem(comment string) string {
	if !utf8.ValidString(comment) {
		return "it is not UTF-8"
	}
	if n := utf8.RuneCountInString(comment); n > maxCommentChars {
		return fmt.Sprintf("it has %d characters; at most %d are allowed", n, maxCommentChars)
	}
	position := 0
	for _, c := range comment {
		if unicode.IsControl(c) {
			return fmt.Sprintf("it holds the control character U+%04X at position %d", c, position)
		}
		position++
	}
	return ""
}

// MatchWatcher is optional: a Bot that also has these methods hears of each match's start
// and end.
type MatchWatcher interface {
	MatchStarted(m *pb.MatchStarted)
	MatchEnded(m *pb.MatchEnded)
}

const (
	clientName     = "bullring-go-kit/0.1.0"
	backoffStart   = 50 * time.Millisecond
	backoffCap     = 2 * time.Second
	exitPlayed     = 0
	exitOther      = 1
	exitUsage      = 2
	exitRefused    = 3
	exitGaveUp     = 4
	exitReplaced   = 5
	reasonReplaced = pb.CloseReason_CLOSE_REASON_REPLACED
)

// options are the runner's settings, as the command line gives them.
type options struct {
	server, token, ladder string
	matches               int
	margin, giveUp        time.Duration
	verbose               bool
}

// outcome says how one connection ended: exit with a status, or reconnect (retry != "").
type outcome struct {
	exit      int
	retry     string
	connected bool
}

// choice is the bot's answer to one decision: the index of a legal action, or -1 with why.
type choice struct {
	index                      int
	comment, problem, panicked string
}

// runner plays for one bot; its state lives across reconnects.
type runner struct {
	bot     Bot
	opts    options
	logger  *log.Logger
	ctx     context.Context
	botMu   sync.Mutex // the bot's methods are called one at a time
	mu      sync.Mutex // guards the fields below
	matchID string
	seat    int32 // this bot's seat in matchID, from its MatchStarted
	answers map[string]*pb.Answer
	played  int
}

func parseOptions() options {
	env := func(name string) string { return os.Getenv(name) }
	var o options
	var marginMs int
	var giveUpS float64
	flag.StringVar(&o.server, "server", env("BULLRING_SERVER"), "the referee server's gRPC address HOST:PORT (default $BULLRING_SERVER)")
	flag.StringVar(&o.token, "token", env("BULLRING_TOKEN"), "a registered bot's token, or a match seat's (default $BULLRING_TOKEN)")
	flag.StringVar(&o.ladder, "ladder", env("BULLRING_LADDER"), "the ladder to join: six_nimmt or no_thanks (default $BULLRING_LADDER; without one the token must be a match seat's)")
	flag.IntVar(&o.matches, "matches", 0, "with -ladder: stop after N matches (0: never)")
	flag.IntVar(&marginMs, "margin-ms", 50, "answer at least this many ms before the deadline")
	flag.Float64Var(&giveUpS, "give-up-after", 60, "stop reconnecting after this many seconds without a connection")
	flag.BoolVar(&o.verbose, "verbose", false, "also log every answer, verdict and event")
	flag.Parse()
	if o.server == "" || o.token == "" || o.matches < 0 || marginMs < 0 || giveUpS < 0 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: bot --server HOST:PORT --token TOKEN [--ladder GAME] [--matches N] [options]; --help lists them")
		os.Exit(exitUsage)
	}
	o.margin = time.Duration(marginMs) * time.Millisecond
	o.giveUp = time.Duration(giveUpS * float64(time.Second))
	return o
}

// Run plays for bot as the command line says, until told to stop, then exits the process
// with the runner's status.
func Run(bot Bot) {
	opts := parseOptions()
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	r := &runner{bot: bot, opts: opts, ctx: ctx, answers: map[string]*pb.Answer{},
		logger: log.New(os.Stderr, "", log.LstdFlags|log.Lmicroseconds)}
	go func() {
		name := map[os.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[<-signals]
		r.logf("INFO", "%s: stopping", name)
		cancel()
	}()
	os.Exit(r.run())
}

func (r *runner) logf(level, format string, args ...interface{}) {
	if level == "DEBUG" && !r.opts.verbose {
		return
	}
	r.logger.Printf("%s bullring: %s", level, fmt.Sprintf(format, args...))
}

func (r *runner) run() int {
	where := ""
	if r.opts.ladder != "" {
		where = " to play the " + r.opts.ladder + " ladder"
	}
	r.logf("INFO", "connecting to %s%s", r.opts.server, where)
	conn, err := grpc.Dial(r.opts.server, grpc.WithInsecure())
	if err != nil {
		r.logf("ERROR", "bad server address %q: %v", r.opts.server, err)
		return exitUsage
	}
	defer conn.Close()
	client := pb.NewBotServiceClient(conn)
	failures := 0
	lastConnected := time.Now()
	everConnected := false
	for {
		out := r.connection(client)
		if r.ctx.Err() != nil {
			return 0
		}
		if out.retry == "" {
			return out.exit
		}
		if out.connected {
			failures = 0
			lastConnected = time.Now()
			everConnected = true
		}
		failures++
		if time.Since(lastConnected) > r.opts.giveUp {
			r.logf("ERROR", "giving up: no connection for %v (%s)", r.opts.giveUp, out.retry)
			return exitGaveUp
		}
		delay := time.Duration(math.Min(float64(backoffCap), float64(backoffStart)*math.Pow(2, float64(failures-1))) * (0.5 + rand.Float64()/2))
		switch {
		case out.connected:
			r.logf("WARNING", "connection lost (%s); reconnecting in %v", out.retry, delay.Round(time.Millisecond))
		case everConnected:
			r.logf("WARNING", "cannot reconnect (%s); trying again in %v", out.retry, delay.Round(time.Millisecond))
		default:
			r.logf("WARNING", "cannot connect to %s (%s); trying again in %v", r.opts.server, out.retry, delay.Round(time.Millisecond))
		}
		select {
		case <-r.ctx.Done():
			return 0
		case <-time.After(delay):
		}
	}
}

// connection plays one Play stream, from Join to its end.
func (r *runner) connection(client pb.BotServiceClient) outcome {
	ctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(r.ctx, "authorization", "Bearer "+r.opts.token))
	defer cancel()
	stream, err := client.Play(ctx)
	if err != nil {
		return r.ended(err, nil, false)
	}
	var sendMu sync.Mutex
	send := func(req *pb.PlayRequest) {
		sendMu.Lock()
		defer sendMu.Unlock()
		if err := stream.Send(req); err != nil {
			r.logf("DEBUG", "send failed: %v", err)
		}
	}
	r.mu.Lock()
	remaining := 0
	if r.opts.matches > 0 {
		remaining = r.opts.matches - r.played
	}
	r.mu.Unlock()
	send(&pb.PlayRequest{Body: &pb.PlayRequest_Join{Join: &pb.Join{
		Client: clientName, AcceptBatches: true, Ladder: r.opts.ladder, Matches: uint32(remaining)}}})
	connected := false
	var closed *pb.Closed
	for {
		resp, err := stream.Recv()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return r.ended(err, closed, connected)
		}
		connected = true
		messages := []*pb.PlayResponse{resp}
		if b := resp.GetBatch(); b != nil {
			messages = b.Messages
		}
		for _, m := range messages {
			if c := m.GetClosed(); c != nil {
				closed = c
				r.logf("INFO", "the server closed the stream: %v (%s)", c.Reason, c.Message)
			} else if r.handle(m, send) {
				sendMu.Lock()
				stream.CloseSend()
				sendMu.Unlock()
				return outcome{exit: exitPlayed}
			}
		}
	}
}

// ended says what to do once a stream has ended with err (nil: status OK).
func (r *runner) ended(err error, closed *pb.Closed, connected bool) outcome {
	if r.ctx.Err() != nil {
		return outcome{exit: 0}
	}
	if closed != nil {
		switch closed.Reason {
		case reasonReplaced:
			r.logf("ERROR", "a newer connection with this token took over; stopping (two runners on one token would take turns)")
			return outcome{exit: exitReplaced}
		case pb.CloseReason_CLOSE_REASON_TOKEN_REVOKED, pb.CloseReason_CLOSE_REASON_BOT_DISABLED:
			r.logf("ERROR", "this token plays no more (%v: %s)", closed.Reason, closed.Message)
			return outcome{exit: exitRefused}
		case pb.CloseReason_CLOSE_REASON_MATCHES_PLAYED:
			r.logf("INFO", "played the %d matches asked for", r.opts.matches)
			return outcome{exit: exitPlayed}
		}
	}
	if err == nil {
		r.mu.Lock()
		done := r.opts.matches > 0 && r.played >= r.opts.matches
		r.mu.Unlock()
		if done {
			return outcome{exit: exitPlayed}
		}
		return outcome{retry: "the server ended the stream", connected: connected}
	}
	st := status.Convert(err)
	what := fmt.Sprintf("%v: %s", st.Code(), st.Message())
	switch st.Code() {
	case codes.Unauthenticated, codes.PermissionDenied:
		r.logf("ERROR", "the token was refused (%s)", what)
		return outcome{exit: exitRefused}
	case codes.Aborted:
		r.logf("ERROR", "stopping: %s", what)
		return outcome{exit: exitReplaced}
	case codes.Unavailable, codes.Canceled, codes.Internal, codes.Unknown, codes.DeadlineExceeded:
		return outcome{retry: what, connected: connected}
	case codes.InvalidArgument:
		r.logf("ERROR", "the server refused: %s", what)
		return outcome{exit: exitUsage}
	}
	r.logf("ERROR", "the server refused: %s", what)
	return outcome{exit: exitOther}
}

// handle acts on one server message; it returns true when this seat's only match has ended.
func (r *runner) handle(m *pb.PlayResponse, send func(*pb.PlayRequest)) bool {
	switch body := m.Body.(type) {
	case *pb.PlayResponse_LadderQueued:
		r.logf("INFO", "waiting on the %s ladder as %s", body.LadderQueued.Game, body.LadderQueued.Bot)
	case *pb.PlayResponse_MatchStarted:
		s := body.MatchStarted
		r.mu.Lock()
		resumed := s.MatchId == r.matchID
		r.seat = s.Seat
		if !resumed {
			r.matchID = s.MatchId
			r.answers = map[string]*pb.Answer{}
		}
		r.mu.Unlock()
		if resumed {
			r.logf("INFO", "resumed match %s, seat %d", s.MatchId, s.Seat)
			return false
		}
		r.logf("INFO", "match %s started: %s, seat %d of [%s]", s.MatchId, s.Game, s.Seat, strings.Join(s.SeatNames, ", "))
		if w, ok := r.bot.(MatchWatcher); ok {
			r.guard("MatchStarted", func() { w.MatchStarted(s) })
		}
	case *pb.PlayResponse_Decision:
		received := time.Now()
		go func() {
			if answer := r.decide(body.Decision, received); answer != nil {
				send(&pb.PlayRequest{Body: &pb.PlayRequest_Answer{Answer: answer}})
			}
		}()
	case *pb.PlayResponse_Accepted:
		r.logf("DEBUG", "answer to %s accepted", body.Accepted.DecisionId)
	case *pb.PlayResponse_Rejected:
		x := body.Rejected
		r.logf("WARNING", "answer to %s rejected (%v): %s", x.DecisionId, x.Reason, x.Message)
	case *pb.PlayResponse_Event:
		r.logf("DEBUG", "event %v", body.Event)
	case *pb.PlayResponse_MatchEnded:
		e := body.MatchEnded
		r.mu.Lock()
		r.played++
		id, seat := r.matchID, int(r.seat)
		r.mu.Unlock()
		termination := strings.ToLower(strings.TrimPrefix(fmt.Sprint(e.Termination), "TERMINATION_"))
		line := fmt.Sprintf("match %s ended: totals %s ranks %s (%s)", id, list(e.Totals), list(e.Ranks), termination)
		if seat >= 0 && seat < len(e.Totals) && seat < len(e.Ranks) {
			line += fmt.Sprintf("; you (seat %d): total %d, rank %d", seat, e.Totals[seat], e.Ranks[seat])
		}
		fmt.Println(line)
		if w, ok := r.bot.(MatchWatcher); ok {
			r.guard("MatchEnded", func() { w.MatchEnded(e) })
		}
		return r.opts.ladder == ""
	default:
		r.logf("WARNING", "unknown message %v; ignored", m)
	}
	return false
}

func list(xs []int32) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// guard calls a notification method of the bot and logs a panic in it.
func (r *runner) guard(name string, call func()) {
	r.botMu.Lock()
	defer r.botMu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			r.logf("ERROR", "the bot's %s panicked: %v\n%s", name, p, debug.Stack())
		}
	}()
	call()
}

// decide asks the bot for one decision: the Answer to send, or nil to leave it to the
// server's default action.
func (r *runner) decide(req *pb.DecisionRequest, received time.Time) *pb.Answer {
	id := req.DecisionId
	r.mu.Lock()
	given := r.answers[id]
	r.mu.Unlock()
	if given != nil {
		r.logf("INFO", "decision %s asked again; sending the same answer", id)
		return given
	}
	budget := time.Duration(req.TimeLeftMs)*time.Millisecond - r.opts.margin - time.Since(received)
	if budget <= 0 {
		r.logf("WARNING", "missed decision %s (%v): only %d ms left, margin %v", id, req.Kind, req.TimeLeftMs, r.opts.margin)
		return nil
	}
	done := make(chan choice, 1)
	go func() {
		r.botMu.Lock()
		defer r.botMu.Unlock()
		defer func() {
			if p := recover(); p != nil {
				done <- choice{index: -1, panicked: fmt.Sprintf("%v\n%s", p, debug.Stack())}
			}
		}()
		done <- r.ask(req)
	}()
	select {
	case <-time.After(budget):
		r.logf("WARNING", "missed decision %s (%v): the bot did not answer within %v; the server applies the default action", id, req.Kind, budget.Round(time.Millisecond))
		return nil
	case res := <-done:
		if res.panicked != "" {
			r.logf("ERROR", "the bot raised on decision %s (%v); not answered, the server applies the default action: %s", id, req.Kind, res.panicked)
			return nil
		}
		if res.index < 0 {
			r.logf("ERROR", "decision %s (%v): %s; not answered, the server applies the default action", id, req.Kind, res.problem)
			return nil
		}
		if problem := commentProblem(res.comment); problem != "" {
			r.logf("WARNING", "decision %s: the comment %q is left out: %s", id, res.comment, problem)
			res.comment = ""
		}
		answer := &pb.Answer{DecisionId: id, Action: req.Legal[res.index], Comment: res.comment}
		r.mu.Lock()
		r.answers[id] = answer
		r.mu.Unlock()
		r.logf("DEBUG", "decision %s (%v): answered %v", id, req.Kind, answer)
		return answer
	}
}

// comment asks the bot's Comment; a panic there is logged, and the answer goes without one.
func (r *runner) comment(c Commenter) (comment string) {
	defer func() {
		if p := recover(); p != nil {
			r.logf("ERROR", "the bot's Comment panicked; answering without a comment: %v\n%s", p, debug.Stack())
			comment = ""
		}
	}()
	return c.Comment()
}

// ask calls the bot's method for the request's kind and finds its answer among the legal
// actions (index -1 and a message when it is not one of them), with the bot's comment when
// it is a Commenter.
func (r *runner) ask(req *pb.DecisionRequest) (res choice) {
	var cards []int32
	var words []string
	for _, a := range req.Legal {
		switch v := a.Value.(type) {
		case *pb.Action_Card:
			cards = append(cards, v.Card)
		case *pb.Action_Row:
			cards = append(cards, v.Row)
		case *pb.Action_Word:
			words = append(words, v.Word)
		}
	}
	var chosen interface{}
	switch req.Kind {
	case pb.DecisionKind_DECISION_KIND_PLAY_CARD:
		chosen = r.bot.PlayCard(req.GetSixNimmt(), cards)
	case pb.DecisionKind_DECISION_KIND_CHOOSE_ROW:
		chosen = r.bot.ChooseRow(req.GetSixNimmt(), cards)
	case pb.DecisionKind_DECISION_KIND_DRAFT_CARD:
		chosen = r.bot.DraftCard(req.GetSixNimmt(), cards)
	case pb.DecisionKind_DECISION_KIND_TAKE_OR_PASS:
		chosen = r.bot.TakeOrPass(req.GetNoThanks(), words)
	case pb.DecisionKind_DECISION_KIND_REVEAL_HIDDEN_CARD:
		chosen = r.bot.RevealHiddenCard(req.GetNoThanks(), words)
	default:
		res.index, res.problem = -1, fmt.Sprintf("unknown decision kind %v", req.Kind)
		return
	}
	if commenter, ok := r.bot.(Commenter); ok {
		res.comment = r.comment(commenter)
	}
	for i, a := range req.Legal {
		switch v := a.Value.(type) {
		case *pb.Action_Card:
			if chosen == v.Card {
				res.index = i
				return
			}
		case *pb.Action_Row:
			if chosen == v.Row {
				res.index = i
				return
			}
		case *pb.Action_Word:
			if chosen == v.Word {
				res.index = i
				return
			}
		}
	}
	res.index, res.problem = -1, fmt.Sprintf("the bot answered %v, not one of the legal actions %v", chosen, append(cardsAsAny(cards), wordsAsAny(words)...))
	return
}

func cardsAsAny(xs []int32) []interface{} {
	out := make([]interface{}, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func wordsAsAny(xs []string) []interface{} {
	out := make([]interface{}, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
