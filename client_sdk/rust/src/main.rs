//! A starter bot for both games: edit the methods, `cargo build --release`, play.

use bullring::contract::{DecisionRequest, NoThanksObservation, SixNimmtObservation};
use bullring::Bot;

/// Plays the lowest card, takes the shortest row, takes a card its pot pays for, and says why
/// beside each move.
#[derive(Default)]
struct StarterBot {
    /// The reason for the answer just chosen, for `comment`.
    why: &'static str,
}

impl Bot for StarterBot {
    /// 6 nimmt!: the lowest card of the hand.
    fn play_card(&mut self, seen: &SixNimmtObservation, _d: &DecisionRequest) -> i32 {
        self.why = "lowest card";
        *seen.hand.iter().min().expect("a card in hand")
    }

    /// 6 nimmt!: the row with the fewest cards.
    fn choose_row(&mut self, seen: &SixNimmtObservation, _d: &DecisionRequest) -> i32 {
        self.why = "shortest row";
        (0..seen.rows.len()).min_by_key(|&r| seen.rows[r].cards.len()).unwrap_or(0) as i32
    }

    /// No Thanks!: take when out of chips or when the pot pays for a third of the card.
    fn take_or_pass(&mut self, seen: &NoThanksObservation, _d: &DecisionRequest) -> String {
        let take = seen.chips == 0 || seen.pot * 3 >= seen.card;
        self.why = if seen.chips == 0 {
            "out of chips"
        } else if take {
            "the pot pays for it"
        } else {
            "too dear for the pot"
        };
        (if take { "take" } else { "pass" }).to_string()
    }

    /// Why: the reason the method just called gave, then forgotten (none, none).
    fn comment(&mut self) -> String {
        std::mem::take(&mut self.why).to_string()
    }
}

fn main() {
    bullring::run(StarterBot::default());
}
