// The kit's hand-written layer: the Bot interface (one method per decision kind) and Run,
// the runner that joins a ladder (or one match's seat) over BotService.Play and answers for
// the bot. The message types are generated from proto/ by `make` (build/gen/, never edited).
#pragma once

#include <string>
#include <vector>

#include "bullring/v2/referee.pb.h"

namespace bullring {

using SixNimmtObservation = ::bullring::v2::SixNimmtObservation;
using NoThanksObservation = ::bullring::v2::NoThanksObservation;
using MatchStarted = ::bullring::v2::MatchStarted;
using MatchEnded = ::bullring::v2::MatchEnded;

// What a bot author writes. Each method gets what the seat may know and the legal answers,
// and returns one of them. The runner calls them one at a time.
class Bot {
 public:
  virtual ~Bot() = default;
  // 6 nimmt!: the card to play from the hand.
  virtual int PlayCard(const SixNimmtObservation& obs, const std::vector<int>& legal) = 0;
  // 6 nimmt!: the row (0..3) to take when the card is lower than every row's end.
  virtual int ChooseRow(const SixNimmtObservation& obs, const std::vector<int>& legal) = 0;
  // 6 nimmt! professional variant: the card to draft from the pool.
  virtual int DraftCard(const SixNimmtObservation& obs, const std::vector<int>& legal) = 0;
  // No Thanks!: "take" the face-up card or "pass" (pay a chip).
  virtual std::string TakeOrPass(const NoThanksObservation& obs,
                                 const std::vector<std::string>& legal) = 0;
  // No Thanks! hidden_card variant: "reveal" the hidden card or "keep" it.
  virtual std::string RevealHiddenCard(const NoThanksObservation& obs,
                                       const std::vector<std::string>& legal) = 0;
  // Why, in the bot's own words, it chose the answer its decision method has just returned
  // (optional). The runner asks right after that method, on the same thread, and sends the
  // comment with the answer; it is stored in the replay and shown beside the move once the
  // move is public. UTF-8, at most 200 characters, no control characters; "" (the default)
  // sends none. A comment that throws, or that the server would refuse, is logged and left
  // out, and the answer goes without it.
  virtual std::string Comment() { return ""; }
  // Called when a match starts (optional).
  virtual void OnMatchStarted(const MatchStarted&) {}
  // Called when a match ends (optional).
  virtual void OnMatchEnded(const MatchEnded&) {}
};

// Plays for `bot` as the command line says (`--help` lists the options) until told to stop;
// returns the exit status: 0 stopped (SIGINT, SIGTERM, or the matches asked for are played),
// 1 another refusal, 2 bad arguments, 3 the token was refused, revoked or the bot disabled,
// 4 no connection for --give-up-after seconds, 5 a newer connection replaced this one.
int Run(Bot& bot, int argc, char** argv);

}  // namespace bullring
