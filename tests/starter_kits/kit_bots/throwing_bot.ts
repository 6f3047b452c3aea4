// A bot whose third 6 nimmt! card throws and whose comments are one character too long
// (tests/starter_kits.py puts it in src/bot.ts).
import { Bot, NoThanksObservation, SixNimmtObservation, run } from './bullring';

class ThrowingBot implements Bot {
  private cards = 0;

  playCard(obs: SixNimmtObservation, legal: number[]): number {
    this.cards += 1;
    if (this.cards === 3) throw new Error('thrown on purpose at the third card');
    return legal[0];
  }

  chooseRow(obs: SixNimmtObservation, legal: number[]): number { return legal[0]; }

  draftCard(obs: SixNimmtObservation, legal: number[]): number { return legal[0]; }

  takeOrPass(obs: NoThanksObservation, legal: string[]): string { return legal[0]; }

  revealHiddenCard(obs: NoThanksObservation, legal: string[]): string { return legal[0]; }

  comment(): string { return 'x'.repeat(201); }
}

run(new ThrowingBot());
