// The starter bot: edit this file. Each method gets what the seat may know and the legal
// answers, and returns one of them; Comment says why. Build with `make`, run with
// `./build/bot --server ...`.
package main

import (
	"sort"

	pb "bullring/v2"
)

// starterBot keeps the reason for the answer just chosen in why, for Comment.
type starterBot struct{ why string }

// PlayCard (6 nimmt!): the card just above a row's end (it fits closest), else the lowest.
func (b *starterBot) PlayCard(obs *pb.SixNimmtObservation, legal []int32) int32 {
	gap := func(card int32) int32 {
		best := int32(999)
		for _, row := range obs.Rows {
			if end := row.Cards[len(row.Cards)-1]; card > end && card-end < best {
				best = card - end
			}
		}
		return best
	}
	sort.Slice(legal, func(i, j int) bool { return gap(legal[i])*200+legal[i] < gap(legal[j])*200+legal[j] })
	b.why = "closest to a row's end"
	if gap(legal[0]) == 999 {
		b.why = "lowest card"
	}
	return legal[0]
}

// ChooseRow (6 nimmt!): take the row with the fewest cards.
func (b *starterBot) ChooseRow(obs *pb.SixNimmtObservation, legal []int32) int32 {
	b.why = "shortest row"
	sort.Slice(legal, func(i, j int) bool { return len(obs.Rows[legal[i]].Cards) < len(obs.Rows[legal[j]].Cards) })
	return legal[0]
}

// DraftCard (6 nimmt! professional): draft the first card offered.
func (b *starterBot) DraftCard(obs *pb.SixNimmtObservation, legal []int32) int32 { return legal[0] }

// TakeOrPass (No Thanks!): take a card when its chips pay for a third of it, or when out of chips.
func (b *starterBot) TakeOrPass(obs *pb.NoThanksObservation, legal []string) string {
	if len(legal) == 1 {
		b.why = "out of chips"
		return legal[0]
	}
	if obs.Pot*3 >= obs.Card {
		b.why = "the pot pays for it"
		return "take"
	}
	b.why = "too dear for the pot"
	return "pass"
}

// RevealHiddenCard (No Thanks! hidden card): keep it hidden.
func (b *starterBot) RevealHiddenCard(obs *pb.NoThanksObservation, legal []string) string {
	return "keep"
}

// Comment (optional, Commenter): the reason the method just called gave, then forgotten (a
// method that gave none, none).
func (b *starterBot) Comment() string {
	why := b.why
	b.why = ""
	return why
}

func main() { Run(&starterBot{}) }
