// The starter bot: edit this file. Each method gets what the seat may know and the legal
// answers, and returns one of them; Comment says why. Build with `make`, run with
// `./build/bot --server ...`.
#include <algorithm>
#include <string>
#include <utility>

#include "bullring.h"

class StarterBot : public bullring::Bot {
 public:
  // 6 nimmt!: the card just above a row's end (it fits closest), else the lowest card.
  int PlayCard(const bullring::SixNimmtObservation& obs, const std::vector<int>& legal) override {
    auto gap = [&](int card) {
      int best = 999;
      for (const auto& row : obs.rows()) {
        int end = row.cards(row.cards_size() - 1);
        if (card > end) best = std::min(best, card - end);
      }
      return best * 200 + card;
    };
    int best = *std::min_element(legal.begin(), legal.end(), [&](int a, int b) { return gap(a) < gap(b); });
    why_ = gap(best) / 200 == 999 ? "lowest card" : "closest to a row's end";
    return best;
  }

  // 6 nimmt!: take the row with the fewest cards.
  int ChooseRow(const bullring::SixNimmtObservation& obs, const std::vector<int>& legal) override {
    why_ = "shortest row";
    return *std::min_element(legal.begin(), legal.end(), [&](int a, int b) {
      return obs.rows(a).cards_size() < obs.rows(b).cards_size();
    });
  }

  // 6 nimmt! professional: draft the first card offered.
  int DraftCard(const bullring::SixNimmtObservation&, const std::vector<int>& legal) override { return legal[0]; }

  // No Thanks!: take a card when its chips pay for a third of it, or when out of chips.
  std::string TakeOrPass(const bullring::NoThanksObservation& obs, const std::vector<std::string>& legal) override {
    if (legal.size() == 1) {
      why_ = "out of chips";
      return legal[0];
    }
    bool take = obs.pot() * 3 >= obs.card();
    why_ = take ? "the pot pays for it" : "too dear for the pot";
    return take ? "take" : "pass";
  }

  // No Thanks! hidden card: keep it hidden.
  std::string RevealHiddenCard(const bullring::NoThanksObservation&, const std::vector<std::string>&) override {
    return "keep";
  }

  // Why: the reason the method just called gave, then forgotten (a method that gave none, none).
  std::string Comment() override { return std::exchange(why_, ""); }

 private:
  std::string why_;  // the reason for the answer just chosen
};

int main(int argc, char** argv) {
  StarterBot bot;
  return bullring::Run(bot, argc, argv);
}
