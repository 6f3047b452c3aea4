// The runner: joins a ladder (or one match's seat) over BotService.Play and answers for
// the bot.
//
// - Sends Join(ladder=GAME) with the token in "authorization: Bearer TOKEN" and plays one
//   match after another on the stream (--matches N to stop after N).
// - Calls the bot's method for each decision and sends its answer, unless the time left
//   less the margin runs out first (the server then applies the default action).
// - An exception thrown by the bot's code is logged with where it was thrown, the decision
//   is not answered (the server applies the default action, docs/rules.md §3) and play
//   goes on.
// - Reconnects with exponential backoff (50 ms doubling to 2 s, jittered) and resends an
//   answer already given when a decision is asked again.
// - Stops on a Closed message or a refusal (exit statuses in bullring.h) and exits 0 on
//   SIGINT or SIGTERM.
#include "bullring.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "bullring/v2/referee.grpc.pb.h"

namespace pb = ::bullring::v2;
using Clock = std::chrono::steady_clock;

// -- where an exception was thrown ---------------------------------------------------------

namespace {
thread_local std::string last_throw_trace;

std::string Demangle(const char* symbol) {
  // backtrace_symbols gives "file(mangled+0x12) [0xaddr]".
  std::string line(symbol);
  auto open = line.find('('), plus = line.find('+', open);
  if (open == std::string::npos || plus == std::string::npos || plus == open + 1) return line;
  std::string mangled = line.substr(open + 1, plus - open - 1);
  int status = 0;
  char* name = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || name == nullptr) return line;
  std::string out = line.substr(0, open + 1) + name + line.substr(plus);
  std::free(name);
  return out;
}
}  // namespace

namespace __cxxabiv1 {
// Every C++ throw passes here first: keep the thread's stack so that the runner can log
// where the bot's exception came from, then throw as usual.
extern "C" void __cxa_throw(void* object, std::type_info* type, void (*destroy)(void*)) {
  void* frames[32];
  int n = backtrace(frames, 32);
  char** symbols = backtrace_symbols(frames, n);
  std::string trace;
  for (int i = 1; symbols != nullptr && i < n; ++i) trace += "    at " + Demangle(symbols[i]) + "\n";
  std::free(symbols);
  last_throw_trace = trace;
  using Throw = void (*)(void*, std::type_info*, void (*)(void*));
  static Throw original = reinterpret_cast<Throw>(dlsym(RTLD_NEXT, "__cxa_throw"));
  original(object, type, destroy);
  __builtin_unreachable();
}
}  // namespace __cxxabiv1

namespace bullring {
namespace {

constexpr const char* kClientName = "bullring-cpp-kit/0.1.0";
constexpr auto kBackoffStart = std::chrono::milliseconds(50);
constexpr auto kBackoffCap = std::chrono::milliseconds(2000);
enum Exit { kPlayed = 0, kOther = 1, kUsage = 2, kRefused = 3, kGaveUp = 4, kReplaced = 5 };

const char* const kUsageText =
    "usage: bot --server HOST:PORT --token TOKEN [options]\n"
    "  --server HOST:PORT       the referee server's gRPC address (default: $BULLRING_SERVER)\n"
    "  --token TOKEN            a registered bot's token, or a match seat's (default: $BULLRING_TOKEN)\n"
    "  --ladder GAME            the ladder to join: six_nimmt or no_thanks (default: $BULLRING_LADDER;\n"
    "                           without one the token must be a match seat's)\n"
    "  --matches N              with --ladder: stop after N matches (default 0: never)\n"
    "  --margin-ms N            answer at least N ms before the deadline (default 50)\n"
    "  --give-up-after SECONDS  stop reconnecting after this long without a connection (default 60)\n"
    "  --verbose                also log every answer, verdict and event\n";

struct Options {
  std::string server, token, ladder;
  int matches = 0;
  int margin_ms = 50;
  double give_up_s = 60;
  bool verbose = false;
};

bool verbose_log = false;
std::mutex log_mutex;

void Log(const char* level, const char* format, ...) {
  if (std::string(level) == "DEBUG" && !verbose_log) return;
  char message[4096];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", std::gmtime(&seconds));
  std::lock_guard<std::mutex> lock(log_mutex);
  std::fprintf(stderr, "%s.%03lldZ %s bullring: %s\n", stamp, static_cast<long long>(ms), level, message);
}

// Parses the command line; false (with a message printed) on bad arguments.
bool ParseArgs(int argc, char** argv, Options& o, bool& help) {
  auto env = [](const char* name) { const char* v = std::getenv(name); return std::string(v ? v : ""); };
  o.server = env("BULLRING_SERVER");
  o.token = env("BULLRING_TOKEN");
  o.ladder = env("BULLRING_LADDER");
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i], value;
    bool inline_value = false;
    if (auto eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      inline_value = true;
    }
    if (flag == "-h" || flag == "--help") { help = true; return false; }
    if (flag == "-v" || flag == "--verbose") { o.verbose = true; continue; }
    if (flag != "--server" && flag != "--token" && flag != "--ladder" && flag != "--matches" &&
        flag != "--margin-ms" && flag != "--give-up-after") {
      std::fprintf(stderr, "unknown argument \"%s\"\n%s", argv[i], kUsageText);
      return false;
    }
    if (!inline_value) {
      if (++i >= argc) { std::fprintf(stderr, "%s needs a value\n", flag.c_str()); return false; }
      value = argv[i];
    }
    try {
      if (flag == "--server") o.server = value;
      else if (flag == "--token") o.token = value;
      else if (flag == "--ladder") o.ladder = value;
      else if (flag == "--matches") o.matches = std::stoi(value);
      else if (flag == "--margin-ms") o.margin_ms = std::stoi(value);
      else o.give_up_s = std::stod(value);
    } catch (const std::exception&) {
      std::fprintf(stderr, "%s wants a number, not \"%s\"\n", flag.c_str(), value.c_str());
      return false;
    }
    if (o.matches < 0 || o.margin_ms < 0 || o.give_up_s < 0) {
      std::fprintf(stderr, "%s wants a number >= 0, not \"%s\"\n", flag.c_str(), value.c_str());
      return false;
    }
  }
  if (o.server.empty() || o.token.empty()) {
    std::fprintf(stderr, "--server and --token (or $BULLRING_SERVER, $BULLRING_TOKEN) are required\n%s",
                 kUsageText);
    return false;
  }
  return true;
}

std::string Join(const google::protobuf::RepeatedField<int32_t>& xs) {
  std::ostringstream out;
  out << "[";
  for (int i = 0; i < xs.size(); ++i) out << (i ? ", " : "") << xs[i];
  out << "]";
  return out.str();
}

// How a match ended, as a word: "normal" or "aborted" (the enum's TERMINATION_NORMAL, or
// the word itself).
std::string Termination(const std::string& word) { return word; }
template <typename Enum>
std::string Termination(Enum value) {
  const auto* named = google::protobuf::GetEnumDescriptor<Enum>()->FindValueByNumber(value);
  std::string name = named ? named->name() : std::to_string(value);
  if (name.rfind("TERMINATION_", 0) == 0) name = name.substr(12);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name;
}

// One Play stream: its context, the stream, and whether answers may still be written.
struct Connection {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<pb::PlayRequest, pb::PlayResponse>> stream;
  std::mutex mutex;  // one write at a time; guards open
  bool open = true;

  void Send(const pb::PlayRequest& request) {
    std::lock_guard<std::mutex> lock(mutex);
    if (open && !stream->Write(request)) Log("DEBUG", "a write failed: the stream is ending");
  }
};

// How a stream ended: exit with a status, or reconnect (retry is not empty).
struct Outcome {
  int exit = 0;
  std::string retry;
  bool connected = false;
};

// The bot's answer to one decision: the index of a legal action, or -1 and why.
struct Choice {
  int index = -1;
  std::string comment, comment_thrown, problem, thrown;
};

// The longest comment an answer may carry (Answer.comment), in characters.
constexpr int kMaxCommentChars = 200;

// What the server would refuse in a comment (not UTF-8, too long, a control character), or
// "" if it may be sent.
std::string CommentProblem(const std::string& comment) {
  int chars = 0;
  for (size_t i = 0; i < comment.size(); ++chars) {
    unsigned char lead = comment[i];
    size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + length > comment.size()) return "it is not UTF-8";
    unsigned code = length == 1 ? lead : lead & (0x7F >> length);
    for (size_t k = 1; k < length; ++k) {
      unsigned char next = comment[i + k];
      if ((next & 0xC0) != 0x80) return "it is not UTF-8";
      code = (code << 6) | (next & 0x3F);
    }
    if (code < 0x20 || (code >= 0x7F && code < 0xA0)) {
      char text[96];
      std::snprintf(text, sizeof text, "it holds the control character U+%04X at position %d", code, chars);
      return text;
    }
    i += length;
  }
  if (chars > kMaxCommentChars) {
    return "it has " + std::to_string(chars) + " characters; at most " + std::to_string(kMaxCommentChars) +
           " are allowed";
  }
  return "";
}

class Runner {
 public:
  Runner(Bot& bot, Options opts) : bot_(bot), opts_(std::move(opts)) {
    grpc::ChannelArguments args;
    // gRPC's own reconnect backoff is kept as short as the runner's, which does the backing off.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
    stub_ = pb::BotService::NewStub(
        grpc::CreateCustomChannel(opts_.server, grpc::InsecureChannelCredentials(), args));
  }

  // Stop at once (a signal): cancel the stream and any wait.
  void Stop(int signal) {
    Log("INFO", "%s: stopping", signal == SIGINT ? "SIGINT" : "SIGTERM");
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    if (current_) current_->context.TryCancel();
    wake_.notify_all();
  }

  int Play() {
    Log("INFO", "connecting to %s%s", opts_.server.c_str(),
        opts_.ladder.empty() ? "" : (" to play the " + opts_.ladder + " ladder").c_str());
    int failures = 0;
    auto last_connected = Clock::now();
    std::mt19937 random(std::random_device{}());
    for (;;) {
      Outcome out = Connect();
      if (Stopped()) return kPlayed;
      if (out.retry.empty()) return out.exit;
      if (out.connected) {
        failures = 0;
        last_connected = Clock::now();
      }
      ++failures;
      if (Clock::now() - last_connected > std::chrono::duration<double>(opts_.give_up_s)) {
        Log("ERROR", "giving up: no connection for %g s (%s)", opts_.give_up_s, out.retry.c_str());
        return kGaveUp;
      }
      auto delay = std::min<Clock::duration>(kBackoffCap, kBackoffStart * (1 << std::min(failures - 1, 10)));
      delay = std::chrono::duration_cast<Clock::duration>(
          delay * std::uniform_real_distribution<double>(0.5, 1.0)(random));
      Log("WARNING", "connection lost (%s); reconnecting in %lld ms", out.retry.c_str(),
          static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(delay).count()));
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, delay, [this] { return stopped_; });
      if (stopped_) return kPlayed;
    }
  }

 private:
  bool Stopped() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stopped_;
  }

  Outcome Connect() {
    auto conn = std::make_shared<Connection>();
    conn->context.AddMetadata("authorization", "Bearer " + opts_.token);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopped_) return {};
      current_ = conn;
    }
    conn->stream = stub_->Play(&conn->context);
    pb::PlayRequest join;
    join.mutable_join()->set_client(kClientName);
    join.mutable_join()->set_accept_batches(true);
    join.mutable_join()->set_ladder(opts_.ladder);
    join.mutable_join()->set_matches(opts_.matches > 0 ? opts_.matches - Played() : 0);
    conn->Send(join);
    bool connected = false, done = false;
    std::unique_ptr<pb::Closed> closed;
    pb::PlayResponse response;
    while (!done && conn->stream->Read(&response)) {
      connected = true;
      std::vector<const pb::PlayResponse*> messages{&response};
      if (response.has_batch()) {
        messages.clear();
        for (const auto& m : response.batch().messages()) messages.push_back(&m);
      }
      for (const pb::PlayResponse* m : messages) {
        if (m->has_closed()) {
          closed = std::make_unique<pb::Closed>(m->closed());
          Log("INFO", "the server closed the stream: %s (%s)",
              pb::CloseReason_Name(closed->reason()).c_str(), closed->message().c_str());
        } else if (Handle(*m, conn)) {
          done = true;
        }
      }
    }
    {
      std::lock_guard<std::mutex> lock(conn->mutex);
      conn->open = false;
      if (done) conn->stream->WritesDone();
    }
    if (done) conn->context.TryCancel();
    grpc::Status status = conn->stream->Finish();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      current_.reset();
    }
    if (done) return {kPlayed, "", true};
    return Ended(status, closed.get(), connected);
  }

  Outcome Ended(const grpc::Status& status, const pb::Closed* closed, bool connected) {
    if (Stopped()) return {};
    if (closed != nullptr) {
      switch (closed->reason()) {
        case pb::CLOSE_REASON_REPLACED:
          Log("ERROR", "a newer connection with this token took over; stopping (two runners on one token would take turns)");
          return {kReplaced};
        case pb::CLOSE_REASON_TOKEN_REVOKED:
        case pb::CLOSE_REASON_BOT_DISABLED:
          Log("ERROR", "this token plays no more (%s: %s)", pb::CloseReason_Name(closed->reason()).c_str(),
              closed->message().c_str());
          return {kRefused};
        case pb::CLOSE_REASON_MATCHES_PLAYED:
          Log("INFO", "played the %d matches asked for", Played());
          return {kPlayed};
        default:
          break;
      }
    }
    if (status.ok()) {
      if (opts_.matches > 0 && Played() >= opts_.matches) return {kPlayed};
      return {0, "the server ended the stream", connected};
    }
    std::string what = std::to_string(status.error_code()) + " " + status.error_message();
    switch (status.error_code()) {
      case grpc::StatusCode::UNAUTHENTICATED:
      case grpc::StatusCode::PERMISSION_DENIED:
        Log("ERROR", "the token was refused (UNAUTHENTICATED or PERMISSION_DENIED: %s)", status.error_message().c_str());
        return {kRefused};
      case grpc::StatusCode::ABORTED:
        Log("ERROR", "stopping: %s", what.c_str());
        return {kReplaced};
      case grpc::StatusCode::UNAVAILABLE:
      case grpc::StatusCode::CANCELLED:
      case grpc::StatusCode::INTERNAL:
      case grpc::StatusCode::UNKNOWN:
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        return {0, "status " + what, connected};
      case grpc::StatusCode::INVALID_ARGUMENT:
        Log("ERROR", "the server refused: %s", what.c_str());
        return {kUsage};
      default:
        Log("ERROR", "the server refused: %s", what.c_str());
        return {kOther};
    }
  }

  int Played() {
    std::lock_guard<std::mutex> lock(mutex_);
    return played_;
  }

  // Acts on one server message; true when this seat's only match has ended.
  bool Handle(const pb::PlayResponse& m, const std::shared_ptr<Connection>& conn) {
    switch (m.body_case()) {
      case pb::PlayResponse::kLadderQueued:
        Log("INFO", "waiting on the %s ladder as %s", m.ladder_queued().game().c_str(),
            m.ladder_queued().bot().c_str());
        return false;
      case pb::PlayResponse::kMatchStarted: {
        const auto& s = m.match_started();
        {
          std::lock_guard<std::mutex> lock(mutex_);
          seat_ = s.seat();
          if (s.match_id() == match_id_) {
            Log("INFO", "resumed match %s, seat %d", s.match_id().c_str(), s.seat());
            return false;
          }
          match_id_ = s.match_id();
          answers_.clear();
        }
        std::string names;
        for (const auto& n : s.seat_names()) names += (names.empty() ? "" : ", ") + n;
        Log("INFO", "match %s started: %s, seat %d of [%s]", s.match_id().c_str(), s.game().c_str(),
            s.seat(), names.c_str());
        Guard("OnMatchStarted", [&] { bot_.OnMatchStarted(s); });
        return false;
      }
      case pb::PlayResponse::kDecision: {
        auto request = std::make_shared<pb::DecisionRequest>(m.decision());
        auto received = Clock::now();
        std::thread([this, request, received, conn] {
          pb::PlayRequest answer;
          if (Decide(*request, received, *answer.mutable_answer())) conn->Send(answer);
        }).detach();
        return false;
      }
      case pb::PlayResponse::kAccepted:
        Log("DEBUG", "answer to %s accepted", m.accepted().decision_id().c_str());
        return false;
      case pb::PlayResponse::kRejected:
        Log("WARNING", "answer to %s rejected (%s): %s", m.rejected().decision_id().c_str(),
            pb::RejectReason_Name(m.rejected().reason()).c_str(), m.rejected().message().c_str());
        return false;
      case pb::PlayResponse::kEvent:
        Log("DEBUG", "event %s", m.event().ShortDebugString().c_str());
        return false;
      case pb::PlayResponse::kMatchEnded: {
        const auto& e = m.match_ended();
        std::string id;
        int seat;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          ++played_;
          id = match_id_;
          seat = seat_;
        }
        std::string you;
        if (seat >= 0 && seat < e.totals_size() && seat < e.ranks_size()) {
          you = "; you (seat " + std::to_string(seat) + "): total " + std::to_string(e.totals(seat)) +
                ", rank " + std::to_string(e.ranks(seat));
        }
        std::printf("match %s ended: totals %s ranks %s (%s)%s\n", id.c_str(), Join(e.totals()).c_str(),
                    Join(e.ranks()).c_str(), Termination(e.termination()).c_str(), you.c_str());
        std::fflush(stdout);
        Guard("OnMatchEnded", [&] { bot_.OnMatchEnded(e); });
        return opts_.ladder.empty();
      }
      default:
        Log("WARNING", "unknown message %s; ignored", m.ShortDebugString().c_str());
        return false;
    }
  }

  // Calls a notification method of the bot and logs what it throws.
  template <typename F>
  void Guard(const char* name, F call) {
    std::lock_guard<std::mutex> lock(bot_mutex_);
    try {
      call();
    } catch (const std::exception& e) {
      Log("ERROR", "the bot's %s threw %s: %s\n%s", name, typeid(e).name(), e.what(), last_throw_trace.c_str());
    } catch (...) {
      Log("ERROR", "the bot's %s threw\n%s", name, last_throw_trace.c_str());
    }
  }

  // Asks the bot for one decision; false leaves it to the server's default action.
  bool Decide(const pb::DecisionRequest& request, Clock::time_point received, pb::Answer& answer) {
    const std::string& id = request.decision_id();
    const std::string kind = pb::DecisionKind_Name(request.kind());
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto given = answers_.find(id);
      if (given != answers_.end()) {
        Log("INFO", "decision %s asked again; sending the same answer", id.c_str());
        answer = given->second;
        return true;
      }
    }
    auto budget = std::chrono::milliseconds(request.time_left_ms() - opts_.margin_ms) - (Clock::now() - received);
    if (budget <= Clock::duration::zero()) {
      Log("WARNING", "missed decision %s (%s): only %d ms left, margin %d ms", id.c_str(), kind.c_str(),
          request.time_left_ms(), opts_.margin_ms);
      return false;
    }
    auto promise = std::make_shared<std::promise<Choice>>();
    std::future<Choice> future = promise->get_future();
    auto copy = std::make_shared<pb::DecisionRequest>(request);
    std::thread([this, promise, copy] {
      std::lock_guard<std::mutex> lock(bot_mutex_);
      Choice choice;
      try {
        choice = Ask(*copy);
      } catch (const std::exception& e) {
        int status = 0;
        char* type = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
        choice.thrown = std::string(status == 0 && type ? type : typeid(e).name()) + ": " + e.what() +
                        "\n" + last_throw_trace;
        std::free(type);
      } catch (...) {
        choice.thrown = "an exception that is not a std::exception\n" + last_throw_trace;
      }
      promise->set_value(choice);
    }).detach();
    if (future.wait_for(budget) != std::future_status::ready) {
      Log("WARNING", "missed decision %s (%s): the bot did not answer within %lld ms; the server applies the default action",
          id.c_str(), kind.c_str(),
          static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(budget).count()));
      return false;
    }
    Choice choice = future.get();
    if (!choice.thrown.empty()) {
      Log("ERROR", "the bot raised on decision %s (%s); not answered, the server applies the default action: %s",
          id.c_str(), kind.c_str(), choice.thrown.c_str());
      return false;
    }
    if (choice.index < 0) {
      Log("ERROR", "decision %s (%s): %s; not answered, the server applies the default action", id.c_str(),
          kind.c_str(), choice.problem.c_str());
      return false;
    }
    if (!choice.comment_thrown.empty()) {
      Log("ERROR", "decision %s: the bot's Comment threw; answering without a comment\n%s", id.c_str(),
          choice.comment_thrown.c_str());
    }
    std::string problem = CommentProblem(choice.comment);
    if (!problem.empty()) {
      Log("WARNING", "decision %s: the comment is left out: %s", id.c_str(), problem.c_str());
      choice.comment.clear();
    }
    answer.set_decision_id(id);
    *answer.mutable_action() = request.legal(choice.index);
    answer.set_comment(choice.comment);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      answers_[id] = answer;
    }
    Log("DEBUG", "decision %s (%s): answered %s", id.c_str(), kind.c_str(), answer.ShortDebugString().c_str());
    return true;
  }

  // Calls the bot's method for the request's kind and finds its answer among the legal actions;
  // then asks the bot's comment on it.
  Choice Ask(const pb::DecisionRequest& request) {
    std::vector<int> numbers;
    std::vector<std::string> words;
    for (const auto& a : request.legal()) {
      if (a.value_case() == pb::Action::kCard) numbers.push_back(a.card());
      if (a.value_case() == pb::Action::kRow) numbers.push_back(a.row());
      if (a.value_case() == pb::Action::kWord) words.push_back(a.word());
    }
    Choice choice;
    int number = 0;
    std::string word;
    bool is_word = false;
    switch (request.kind()) {
      case pb::DECISION_KIND_PLAY_CARD: number = bot_.PlayCard(request.six_nimmt(), numbers); break;
      case pb::DECISION_KIND_CHOOSE_ROW: number = bot_.ChooseRow(request.six_nimmt(), numbers); break;
      case pb::DECISION_KIND_DRAFT_CARD: number = bot_.DraftCard(request.six_nimmt(), numbers); break;
      case pb::DECISION_KIND_TAKE_OR_PASS:
        word = bot_.TakeOrPass(request.no_thanks(), words);
        is_word = true;
        break;
      case pb::DECISION_KIND_REVEAL_HIDDEN_CARD:
        word = bot_.RevealHiddenCard(request.no_thanks(), words);
        is_word = true;
        break;
      default:
        choice.problem = "unknown decision kind " + std::to_string(request.kind());
        return choice;
    }
    try {
      choice.comment = bot_.Comment();
    } catch (...) {
      choice.comment.clear();
      choice.comment_thrown = last_throw_trace.empty() ? "(no trace)" : last_throw_trace;
    }
    for (int i = 0; i < request.legal_size(); ++i) {
      const auto& a = request.legal(i);
      bool match = is_word ? (a.value_case() == pb::Action::kWord && a.word() == word)
                           : ((a.value_case() == pb::Action::kCard && a.card() == number) ||
                              (a.value_case() == pb::Action::kRow && a.row() == number));
      if (match) {
        choice.index = i;
        return choice;
      }
    }
    choice.problem = "the bot answered " + (is_word ? "\"" + word + "\"" : std::to_string(number)) +
                     ", which is not a legal action";
    return choice;
  }

  Bot& bot_;
  Options opts_;
  std::unique_ptr<pb::BotService::Stub> stub_;
  std::mutex bot_mutex_;  // the bot's methods are called one at a time
  std::mutex mutex_;      // guards the fields below
  std::condition_variable wake_;
  bool stopped_ = false;
  std::shared_ptr<Connection> current_;
  std::string match_id_;
  int seat_ = -1;  // this bot's seat in match_id_, from its MatchStarted
  std::map<std::string, pb::Answer> answers_;
  int played_ = 0;
};

}  // namespace

int Run(Bot& bot, int argc, char** argv) {
  Options opts;
  bool help = false;
  if (!ParseArgs(argc, argv, opts, help)) {
    if (help) std::fputs(kUsageText, stdout);
    return help ? 0 : kUsage;
  }
  verbose_log = opts.verbose;
  // SIGINT and SIGTERM are taken by one thread (blocked in every other, gRPC's included).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Runner runner(bot, opts);
  std::thread([&runner, signals] {
    int signal = 0;
    if (sigwait(&signals, &signal) == 0) runner.Stop(signal);
  }).detach();
  int status = runner.Play();
  std::fflush(stdout);
  // Threads still inside the bot's code or gRPC are not waited for.
  std::_Exit(status);
}

}  // namespace bullring
