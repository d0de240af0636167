"""Every public member of the public API has a docstring (the API reference is built from
them: an undocumented member is an empty entry there)."""
import inspect
import types

import pytest

import tenpy_ad as tp
import tenpy_ad.blowup
import tenpy_ad.models
import tenpy_ad.runtime
import tenpy_ad.scipy.linalg
import tenpy_ad.scipy.special
import tenpy_ad.testing

MODULES = [tp, tp.numpy, tp.linalg, tp.ad, tp.scipy, tp.scipy.special, tp.scipy.linalg,
           tenpy_ad.models, tenpy_ad.testing, tenpy_ad.runtime, tenpy_ad.blowup]
CLASSES = [tp.Tensor, tp.TracedTensor, tp.Program, tp.jit, type(tp.linalg.config)]
VALUES = (int, float, str, bytes, tuple, list, dict, set, frozenset, bool, type(None))


def _documented(obj) -> bool:
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    doc = getattr(obj, "__doc__", None)
    return bool(doc and doc.strip())


def _public_members(module) -> list:
    names = getattr(module, "__all__", None) or [n for n in dir(module) if n[0] != "_"]
    members = []
    for name in names:
        obj = getattr(module, name)
        if not isinstance(obj, (types.ModuleType,) + VALUES) and callable(obj):
            members.append((f"{module.__name__}.{name}", obj))
    return members


def _undocumented_members(cls) -> list:
    missing = []
    for name in dir(cls):
        if name.startswith("_"):
            continue
        member = inspect.getattr_static(cls, name)
        if not isinstance(member, VALUES) and not _documented(member):
            missing.append(f"{cls.__name__}.{name}")
    return missing


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_public_functions_and_classes_have_docstrings(module):
    missing = [name for name, obj in _public_members(module) if not _documented(obj)]
    assert missing == []


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_public_attributes_have_docstrings(cls):
    assert _undocumented_members(cls) == []


def test_the_check_sees_an_undocumented_member():
    class Bare:
        def method(self):
            pass

        @property
        def value(self):
            return 1
    assert _undocumented_members(Bare) == ["Bare.method", "Bare.value"]
