import bullring.kit.Bot;
import bullring.kit.Runner;
import bullring.v2.Cards;
import bullring.v2.DecisionRequest;
import bullring.v2.NoThanksObservation;
import java.util.List;

/** A starter bot for both games: edit the methods, rebuild, play. */
public class StarterBot implements Bot {
    /** 6 nimmt!: the lowest card of the hand. */
    @Override
    public int playCard(DecisionRequest d) {
        return d.getSixNimmt().getHand(0);
    }

    /** 6 nimmt!: the row with the fewest cards. */
    @Override
    public int chooseRow(DecisionRequest d) {
        List<Cards> rows = d.getSixNimmt().getRowsList();
        int best = 0;
        for (int row = 1; row < rows.size(); row++) {
            if (rows.get(row).getCardsCount() < rows.get(best).getCardsCount()) {
                best = row;
            }
        }
        return best;
    }

    /** No Thanks!: take when out of chips or when the pot pays for a third of the card. */
    @Override
    public String takeOrPass(DecisionRequest d) {
        NoThanksObservation seen = d.getNoThanks();
        return seen.getChips() == 0 || seen.getPot() * 3 >= seen.getCard() ? "take" : "pass";
    }

    public static void main(String[] args) {
        Runner.main(new StarterBot(), args);
    }
}
