"""Node rules: checks that look at one node's facts. One family per module."""
