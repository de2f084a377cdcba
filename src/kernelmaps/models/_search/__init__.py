"""The searches over the bandwidth, the penalty and the number of features: the batches
of bandwidths (``_batches``), the passes of a search (``_pass``), the nested Nyström map
of ``NystroemKernelRidgeCV`` (``_nested_nystroem``).
"""
