// The starter bot: edit this file. Each method gets what the seat may know and the legal
// answers, and returns one of them. Build with `make`, run with `./build/bot --server ...`.
package main

import (
	"sort"

	pb "bullring/v2"
)

type starterBot struct{}

// PlayCard (6 nimmt!): the card just above a row's end (it fits closest), else the lowest.
func (starterBot) PlayCard(obs *pb.SixNimmtObservation, legal []int32) int32 {
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
	return legal[0]
}

// ChooseRow (6 nimmt!): take the row with the fewest cards.
func (starterBot) ChooseRow(obs *pb.SixNimmtObservation, legal []int32) int32 {
	sort.Slice(legal, func(i, j int) bool { return len(obs.Rows[legal[i]].Cards) < len(obs.Rows[legal[j]].Cards) })
	return legal[0]
}

// DraftCard (6 nimmt! professional): draft the first card offered.
func (starterBot) DraftCard(obs *pb.SixNimmtObservation, legal []int32) int32 { return legal[0] }

// TakeOrPass (No Thanks!): take a card when its chips pay for a third of it, or when out of chips.
func (starterBot) TakeOrPass(obs *pb.NoThanksObservation, legal []string) string {
	if len(legal) == 1 {
		return legal[0]
	}
	if obs.Pot*3 >= obs.Card {
		return "take"
	}
	return "pass"
}

// RevealHiddenCard (No Thanks! hidden card): keep it hidden.
func (starterBot) RevealHiddenCard(obs *pb.NoThanksObservation, legal []string) string { return "keep" }

func main() { Run(starterBot{}) }
