"""FALKON: the preconditioner, the Nyström matvec and the solver (``_solver``), and the
conjugate gradient it runs (``_cg``).
"""
