// The starter bot: edit this file. Each method gets what the seat may know and the legal
// answers, and returns one of them; comment says why.
// `npm run build && npm start -- --server ... --token ...`
import { Bot, NoThanksObservation, SixNimmtObservation, run } from './bullring';

class StarterBot implements Bot {
  /** The reason for the answer just chosen, for `comment`. */
  private why = '';

  /** 6 nimmt!: the card just above a row's end (it fits closest), else the lowest card. */
  playCard(obs: SixNimmtObservation, legal: number[]): number {
    const ends = obs.rows.map((row) => row.cards[row.cards.length - 1]);
    const gap = (card: number): number => Math.min(...ends.map((end) => (card > end ? card - end : 999)));
    const card = [...legal].sort((a, b) => gap(a) - gap(b) || a - b)[0];
    this.why = gap(card) === 999 ? 'lowest card' : "closest to a row's end";
    return card;
  }

  /** 6 nimmt!: take the row with the fewest cards. */
  chooseRow(obs: SixNimmtObservation, legal: number[]): number {
    this.why = 'shortest row';
    return [...legal].sort((a, b) => obs.rows[a].cards.length - obs.rows[b].cards.length)[0];
  }

  /** 6 nimmt! professional: draft the lowest card. */
  draftCard(obs: SixNimmtObservation, legal: number[]): number {
    this.why = 'lowest card';
    return Math.min(...legal);
  }

  /** No Thanks!: take a card when its chips pay for a third of it, or when out of chips. */
  takeOrPass(obs: NoThanksObservation, legal: string[]): string {
    if (!legal.includes('pass')) {
      this.why = 'out of chips';
      return 'take';
    }
    const take = obs.pot * 3 >= obs.card;
    this.why = take ? 'the pot pays for it' : 'too dear for the pot';
    return take ? 'take' : 'pass';
  }

  /** No Thanks! hidden card: keep it hidden. */
  revealHiddenCard(obs: NoThanksObservation, legal: string[]): string {
    return legal.includes('keep') ? 'keep' : legal[0];
  }

  /** Why: the reason the method just called gave, then forgotten (none, none). */
  comment(): string {
    const why = this.why;
    this.why = '';
    return why;
  }
}

run(new StarterBot());
