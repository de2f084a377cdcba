"""The ridge regression's passes over the rows and its solvers: the statistics and
leave-one-out pass (``_pass``), the primal solves and their criteria (``_solvers``), the
dual solve (``_dual``), the scores of every penalty from the statistics (``_path``).
"""
