"""Experiments that compare the feature maps on real data."""

from ._registry import MethodSpec, get_method, method_names, register_method

__all__ = ["MethodSpec", "get_method", "method_names", "register_method"]
