"""Prints the fingerprint of a small derivative graph: it must not depend on the process
(``PYTHONHASHSEED``), see ``tests/test_keys.py``."""
import numpy as np

import tenpy_ad as tp


def grad_fingerprint() -> int:
    x = tp.input((3, 3), name="x")
    y = x
    for _ in range(5):
        y = tp.tanh(y * y) + np.eye(3)
    return tp.ad.grad((y @ y.T).sum() * 0.5, x).fingerprint


if __name__ == "__main__":
    print(grad_fingerprint())
