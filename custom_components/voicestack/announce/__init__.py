"""Announcements, Home Assistant's side: the action, the media players and satellites in the announcer, the media they play."""
