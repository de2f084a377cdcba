"""The ridge regression's passes over the rows and its solvers: the statistics and
leave-one-out pass (``_pass``), the primal and dual solves and their criteria
(``_solvers``), the scores of every penalty from the statistics (``_path``).
"""
