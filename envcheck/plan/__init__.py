"""From findings to a working environment: fix plans, stacks for a target, locks and emitters."""
