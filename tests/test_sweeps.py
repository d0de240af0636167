"""Edge cases of the derivative sweeps: differentiating with respect to an output of a
multi-output primitive, and asking for one tensor's cotangent twice."""
import numpy as np

import tenpy_ad as tp

W = np.arange(9.0).reshape(3, 3) / 9.0


def _svd_loss(x):
    u, s, v = tp.linalg.svd(x)
    return u, (u * W).sum() + (s * s).sum() + (v * W).sum()


def test_grad_with_respect_to_a_multi_output_node(rng):
    a = rng.normal(size=(3, 3))
    x = tp.input((3, 3), name="x")
    u, loss = _svd_loss(x)
    (gx_alone,) = tp.ad.grad(loss, [x])
    gx, gu = tp.ad.grad(loss, [x, u])
    (gu_alone,) = tp.ad.grad(loss, [u])
    gx_alone, gx, gu, gu_alone = tp.evaluate([gx_alone, gx, gu, gu_alone], {x: a})
    assert np.allclose(gx, gx_alone, atol=1e-12)     # u's path to x is kept
    assert np.allclose(gu, W) and np.allclose(gu_alone, W)


def test_grad_through_a_multi_output_node_matches_eager(rng):
    a = rng.normal(size=(3, 3))
    x = tp.input((3, 3), name="x")
    u, loss = _svd_loss(x)
    gx, _ = tp.evaluate(tp.ad.grad(loss, [x, u]), {x: a})
    t = tp.tensor(a, requires_grad=True)
    _svd_loss(t)[1].backward()
    assert np.allclose(gx, t.grad.numpy(), atol=1e-12)


def test_grad_of_a_tensor_listed_twice():
    x = tp.tensor([1.0, 2.0], requires_grad=True)
    z = x * 3.0
    y = (z * z).sum()
    gz, gz_again, gx, gx_again = tp.grad_of([y], [z, z, x, x])
    assert np.allclose(gz.numpy(), [6.0, 12.0]) and np.allclose(gz_again.numpy(), gz.numpy())
    assert np.allclose(gx.numpy(), [18.0, 36.0]) and np.allclose(gx_again.numpy(), gx.numpy())
