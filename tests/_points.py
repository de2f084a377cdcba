"""Six fixed points of R^3 shared by the unbiasedness tests of the Fourier-type maps.

Their principal axes are not the coordinate axes, and their pairwise kernel values (for
the tests' kernels and bandwidths) spread over (0, 1).
"""

import numpy as np

POINTS = np.array(
    [
        [0.0, 0.0, 0.0],
        [0.4, -0.3, 0.2],
        [1.1, 0.5, -0.4],
        [-0.9, 1.3, 0.6],
        [1.8, -1.2, 1.5],
        [-0.2, -0.8, -1.6],
    ]
)
#: The pairs (i < j) of the points, and their number.
IU = np.triu_indices(len(POINTS), k=1)
N_PAIRS = len(IU[0])
