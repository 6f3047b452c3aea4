"""A live match: its runner (the only owner of time), clock, feed and outboxes."""
