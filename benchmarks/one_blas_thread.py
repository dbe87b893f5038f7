"""Imported by every benchmark before NumPy: BLAS on one thread.

Unless OPENBLAS_NUM_THREADS, OMP_NUM_THREADS or MKL_NUM_THREADS is set
already. Idle BLAS threads spinning on a busy 2-core machine add CPU time
at random, and the hook's own work is single-threaded anyway. NumPy reads
these variables once, when it is first imported.
"""

import os

if not any(v in os.environ for v in (
        'OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS')):
    for _name in ('OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS',
                  'OMP_NUM_THREADS'):
        os.environ[_name] = '1'
