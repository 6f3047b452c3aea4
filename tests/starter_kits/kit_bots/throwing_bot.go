// A bot whose third 6 nimmt! card panics and whose comments are one character too long
// (tests/starter_kits.py puts it in bot.go).
package main

import (
	"strings"

	pb "bullring/v2"
)

type throwingBot struct{ cards int }

func (b *throwingBot) PlayCard(obs *pb.SixNimmtObservation, legal []int32) int32 {
	b.cards++
	if b.cards == 3 {
		panic("thrown on purpose at the third card")
	}
	return legal[0]
}

func (b *throwingBot) ChooseRow(obs *pb.SixNimmtObservation, legal []int32) int32 { return legal[0] }

func (b *throwingBot) DraftCard(obs *pb.SixNimmtObservation, legal []int32) int32 { return legal[0] }

func (b *throwingBot) TakeOrPass(obs *pb.NoThanksObservation, legal []string) string {
	return legal[0]
}

func (b *throwingBot) RevealHiddenCard(obs *pb.NoThanksObservation, legal []string) string {
	return legal[0]
}

func (b *throwingBot) Comment() string { return strings.Repeat("x", 201) }

func main() { Run(&throwingBot{}) }
