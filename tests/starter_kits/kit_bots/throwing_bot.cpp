// A bot whose third 6 nimmt! card throws and whose comments are one character too long
// (tests/starter_kits.py puts it in bot.cpp).
#include <stdexcept>

#include "bullring.h"

class ThrowingBot : public bullring::Bot {
 public:
  int PlayCard(const bullring::SixNimmtObservation&, const std::vector<int>& legal) override {
    if (++cards_ == 3) throw std::runtime_error("thrown on purpose at the third card");
    return legal[0];
  }
  int ChooseRow(const bullring::SixNimmtObservation&, const std::vector<int>& legal) override { return legal[0]; }
  int DraftCard(const bullring::SixNimmtObservation&, const std::vector<int>& legal) override { return legal[0]; }
  std::string TakeOrPass(const bullring::NoThanksObservation&, const std::vector<std::string>& legal) override {
    return legal[0];
  }
  std::string RevealHiddenCard(const bullring::NoThanksObservation&, const std::vector<std::string>& legal) override {
    return legal[0];
  }
  std::string Comment() override { return std::string(201, 'x'); }

 private:
  int cards_ = 0;
};

int main(int argc, char** argv) {
  ThrowingBot bot;
  return bullring::Run(bot, argc, argv);
}
