"""Cluster rules: checks that compare nodes (``envcheck cluster`` and ``envcheck diff``).

``model`` holds the cluster-rule decorator and the facts they read, ``values`` the extractors of
comparable values, ``drift`` the CLU rules, ``network`` the cross-node network rules.
"""
