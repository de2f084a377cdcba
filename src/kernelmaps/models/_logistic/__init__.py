"""Logistic regression on explicit features: the passes over the rows (``_passes``: the
loss, its gradient, Hessian-vector products and the bound's Gram matrix, one mergeable
sum per pass) and the preconditioned Newton-CG solver on the host (``_newton``).
"""
