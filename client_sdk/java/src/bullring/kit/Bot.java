package bullring.kit;

import bullring.v2.DecisionRequest;
import bullring.v2.MatchEnded;
import bullring.v2.MatchStarted;
import bullring.v2.PublicEvent;

/**
 * A Bullring bot: one method per kind of decision. Each gets the seat's decision request
 * (generated from the contract): {@code d.getSixNimmt()} or {@code d.getNoThanks()} is what the
 * seat may know, {@code d.getLegalList()} every action it may answer with.
 *
 * <p>A method that is not overridden answers the first legal action. A method that throws is
 * logged with its stack trace and not answered: the server plays the default action.
 */
public interface Bot {
    /** The games this bot plays: a seat or ladder of another game is refused at Join. */
    default java.util.List<String> games() {
        return java.util.List.of("six_nimmt", "no_thanks");
    }

    /** 6 nimmt!: a card of {@code d.getSixNimmt().getHandList()}. */
    default int playCard(DecisionRequest d) {
        return d.getLegal(0).getCard();
    }

    /** 6 nimmt!: the row (0..3) to take when the card is lower than every row's end. */
    default int chooseRow(DecisionRequest d) {
        return d.getLegal(0).getRow();
    }

    /** 6 nimmt! professional variant: a card of the draft pool. */
    default int draftCard(DecisionRequest d) {
        return d.getLegal(0).getCard();
    }

    /** No Thanks!: "take" the face-up card (and its chips) or "pass" (pay a chip). */
    default String takeOrPass(DecisionRequest d) {
        return d.getLegal(0).getWord();
    }

    /** No Thanks! hidden_card variant: "reveal" or "keep" the hidden card. */
    default String revealHiddenCard(DecisionRequest d) {
        return "keep";
    }

    /**
     * Why, in the bot's own words, it chose the answer its decision method has just returned.
     * The runner asks right after that method, on the same thread, and sends the comment with
     * the answer; it is stored in the replay and shown beside the move once the move is
     * public. At most 200 characters, no control characters; empty (the default) sends none.
     * A comment that throws, or that the server would refuse, is logged and left out, and the
     * answer goes without it.
     */
    default String comment() {
        return "";
    }

    /** A match starts: the game, the settings, this seat and every seat's name. */
    default void onMatchStarted(MatchStarted started) {
    }

    /** Something public happened in the match. */
    default void onEvent(PublicEvent event) {
    }

    /** The match is over: totals and ranks by seat. */
    default void onMatchEnded(MatchEnded ended) {
    }
}
