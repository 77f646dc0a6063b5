"""Every node at once: fan-out over Ray (fanout.py), comparison of reports (diff.py) and the
Gloo/NCCL connectivity test (collective.py). Only fanout.py imports ray, inside functions."""
