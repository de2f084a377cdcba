"""How many features the data needs: ``feature_budget`` (``_feature_budget``), the
counts the bounds give (``_bounds``), the statistical dimension
(``_statistical_dimension``).
"""
