import bullring.kit.Bot;
import bullring.kit.Runner;
import bullring.v2.Cards;
import bullring.v2.DecisionRequest;
import bullring.v2.NoThanksObservation;
import java.util.List;

/** A starter bot for both games: edit the methods, rebuild, play. */
public class StarterBot implements Bot {
    /** The reason for the answer just chosen, for {@link #comment}. */
    private String why = "";

    /** 6 nimmt!: the lowest card of the hand. */
    @Override
    public int playCard(DecisionRequest d) {
        why = "lowest card";
        return d.getSixNimmt().getHand(0);
    }

    /** 6 nimmt!: the row with the fewest cards. */
    @Override
    public int chooseRow(DecisionRequest d) {
        why = "shortest row";
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
        if (seen.getChips() == 0) {
            why = "out of chips";
            return "take";
        }
        boolean take = seen.getPot() * 3 >= seen.getCard();
        why = take ? "the pot pays for it" : "too dear for the pot";
        return take ? "take" : "pass";
    }

    /** Why: the reason the method just called gave, then forgotten (none, none). */
    @Override
    public String comment() {
        String said = why;
        why = "";
        return said;
    }

    public static void main(String[] args) {
        Runner.main(new StarterBot(), args);
    }
}
