"""Calling a game's compiled row functions from generic compiled code, by address.

``agents.search.compiled`` runs one compiled driver for every game: it receives the game's row functions and the
policies' functions as an int64 array of their machine-code addresses (``addresses``) and calls them through the
intrinsics below (``call_status(address, states, row, params, returns)`` and so on). Each function was compiled
for one explicit signature, and each intrinsic checks at compile time that the driver passes arguments of those
kinds. Addresses rather than Numba's first-class functions: those are looked up again on every call from Python,
while an array costs nothing to pass and keeps the driver an ordinary cached ``@njit`` function.
"""

from __future__ import annotations

from typing import Any

from jericho_env.core.kernels import NUMBA

if NUMBA:
    from numba.core import cgutils, types
    from numba.core.errors import TypingError
    from numba.extending import intrinsic

# slots of the address array (``addresses``)
STATUS, LEGAL, APPLY, OBSERVE, DETERMINIZE, PRIOR, ROLLOUT, VALUE = range(8)
SLOTS = ("status", "legal", "apply", "observe", "determinize", "prior", "rollout", "value")


def jit_address(dispatcher: Any, signature: Any) -> int:
    """The machine-code address of ``dispatcher``'s version compiled for ``signature`` (Numba's calling convention)."""
    result = dispatcher.get_compile_result(signature)
    address = result.library.get_pointer_to_function(result.fndesc.llvm_func_name)
    if not isinstance(address, int) or address <= 0:
        raise RuntimeError(f"no compiled code for {dispatcher} with signature {signature}")
    return address


def _kind_ok(ty: Any, code: str) -> bool:
    """Whether the Numba type ``ty`` is of kind ``code`` (see the module docstring)."""
    if code == "i":
        return isinstance(ty, (types.Integer, types.IntegerLiteral))
    if not (isinstance(ty, types.Array) and ty.ndim == 1 and ty.layout == "C" and ty.mutable):
        return False
    if code in ("S", "P"):  # the game's states, a params record
        return isinstance(ty.dtype, types.Record)
    element = {"f8": types.float64, "f4": types.float32, "i8": types.int64, "u8": types.uint64}[code]
    return bool(ty.dtype == element)


def _caller(name: str, restype: Any, kinds: tuple[str, ...]) -> Any:
    """An intrinsic ``call(address, *args)`` calling the function at ``address`` with arguments of ``kinds``."""

    def typer(address: Any, args: tuple[Any, ...]) -> Any:
        if not isinstance(address, types.Integer):
            raise TypingError(f"{name}: the address must be an integer, got {address}")
        for i, (ty, code) in enumerate(zip(args, kinds, strict=True)):
            if not _kind_ok(ty, code):
                raise TypingError(f"{name}: argument {i} must be of kind {code!r}, got {ty}")
        states = {ty for ty, code in zip(args, kinds, strict=True) if code == "S"}
        if len(states) > 1:
            raise TypingError(f"{name}: the state arrays must be of one type, got {sorted(map(str, states))}")
        return restype(address, *args)

    def codegen(context: Any, builder: Any, sig: Any, llargs: Any) -> Any:
        tys = sig.args[1:]
        argtys = [types.int64 if code == "i" else ty for ty, code in zip(tys, kinds, strict=True)]
        values = [context.cast(builder, v, t, c) for v, t, c in zip(llargs[1:], tys, argtys, strict=True)]
        fnty = context.call_conv.get_function_type(restype, argtys)
        pointer = builder.inttoptr(llargs[0], fnty.as_pointer())
        status, result = context.call_conv.call_function(builder, pointer, restype, argtys, values)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return context.get_dummy_value() if restype == types.none else result

    n = len(kinds)
    # intrinsics take fixed positional arguments (a tuple of arrays would cost reference counting per call)
    if n == 4:

        def call4(typingctx: Any, address: Any, a: Any, b: Any, c: Any, d: Any) -> Any:
            return typer(address, (a, b, c, d)), codegen

        return intrinsic(call4)
    if n == 5:

        def call5(typingctx: Any, address: Any, a: Any, b: Any, c: Any, d: Any, e: Any) -> Any:
            return typer(address, (a, b, c, d, e)), codegen

        return intrinsic(call5)
    if n == 7:

        def call7(typingctx: Any, address: Any, a: Any, b: Any, c: Any, d: Any, e: Any, f: Any, g: Any) -> Any:
            return typer(address, (a, b, c, d, e, f, g)), codegen

        return intrinsic(call7)

    def call8(typingctx: Any, address: Any, a: Any, b: Any, c: Any, d: Any, e: Any, f: Any, g: Any, h: Any) -> Any:
        return typer(address, (a, b, c, d, e, f, g, h)), codegen

    return intrinsic(call8)


if NUMBA:
    _S, _P = "S", "P"
    #: ``status(states, row, params, returns float64[::1]) -> int64``
    call_status = _caller("status", types.int64, (_S, "i", _P, "f8"))
    #: ``legal(states, row, params, out int64[::1]) -> int64``
    call_legal = _caller("legal", types.int64, (_S, "i", _P, "i8"))
    #: ``apply(states, row, params, action)``
    call_apply = _caller("apply", types.none, (_S, "i", _P, "i"))
    #: ``observe(states, row, params, seat, out float32[::1])``
    call_observe = _caller("observe", types.none, (_S, "i", _P, "i", "f4"))
    #: ``determinize(src, src_row, params, seat, dst, dst_row, stream uint64[::1], k) -> bool``
    call_determinize = _caller("determinize", types.boolean, (_S, "i", _P, "i", _S, "i", "u8", "i"))
    #: ``policy(obs float32[::1], legal int64[::1], n, params, stream uint64[::1], k, weights float64[::1]) -> int64``
    call_policy = _caller("policy", types.int64, ("f4", "i8", "i", _P, "u8", "i", "f8"))
    #: ``value(states, row, params, out float64[::1])``
    call_value = _caller("value", types.none, (_S, "i", _P, "f8"))


__all__ = ["SLOTS", "jit_address"]
