"""Servers of a fleet that share one ladder: the seats of bots connected to one server,
relayed to the match that another server runs, through a message broker."""
