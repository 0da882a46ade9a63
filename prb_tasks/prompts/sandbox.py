"""A Jinja sandbox with limits on what a template may build, produce and do.

jinja2's :class:`~jinja2.sandbox.SandboxedEnvironment` keeps a template away from Python
internals but not from the machine's memory: ``{{ 'x' * 300000000 }}`` allocates
gigabytes. :class:`LimitedSandbox` adds, per render:

- **output**: at most :data:`MAX_OUTPUT` characters in total, counting the literal text
  and every ``{{ }}`` value, inside macros and blocks too (each piece is counted
  before it is turned into text);
- **values**: no string, list or number bigger than about :data:`MAX_VALUE` characters is
  built: ``*``, ``+``, ``%``, ``**`` and ``~`` are checked before they run, so are the
  filters and methods that grow text (``center``, ``indent``, ``join``, ``replace``,
  ``format``, ``wordwrap``, ``tojson``, ``batch``, ``str.ljust``, ``str.format``, ...),
  and every filter and call result is measured;
- **work**: at most :data:`MAX_STEPS` loop iterations and calls (macros included), and
  ``range()`` of at most :data:`MAX_RANGE` items.

Anything beyond raises :class:`TemplateLimit`, whose message says which limit; the
caller adds the file and line. A template is prepared with :func:`prepare` (which
also refuses ``{% include %}``, ``{% import %}`` and ``{% extends %}``: a user template is
one file).
"""

from __future__ import annotations

import functools
import inspect
import math
import re
import string
import types
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from jinja2 import nodes, pass_context
from jinja2.nodes import EvalContext
from jinja2.runtime import Context, Undefined
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import Namespace, generate_lorem_ipsum
from jinja2.visitor import NodeTransformer

MAX_OUTPUT = 1_000_000
MAX_VALUE = 1_000_000
MAX_STEPS = 100_000
MAX_RANGE = 100_000
MAX_INT_BITS = 65_536
# Estimating sizes walks containers; this caps that walking per render.
_MAX_WALK = 5_000_000


class TemplateLimit(Exception):
    """A template went beyond a limit of :class:`LimitedSandbox`; the message says which."""


class TemplateFeatureRefused(Exception):
    """A template uses a tag user templates cannot use.

    Attributes:
        lineno: line of the tag.
    """

    def __init__(self, message: str, lineno: int) -> None:
        super().__init__(message)
        self.lineno = lineno


@dataclass
class _Budget:
    output: int = MAX_OUTPUT
    steps: int = MAX_STEPS
    walk: int = _MAX_WALK


_BUDGET: ContextVar[_Budget | None] = ContextVar("prb_template_budget", default=None)


class budget_scope:  # noqa: N801 - used as a context manager
    """``with budget_scope():`` the code inside (one render) gets fresh limits."""

    def __enter__(self) -> None:
        self._token = _BUDGET.set(_Budget())

    def __exit__(self, *exc: object) -> None:
        _BUDGET.reset(self._token)


def _step() -> None:
    budget = _BUDGET.get()
    if budget is not None:
        budget.steps -= 1
        if budget.steps < 0:
            raise TemplateLimit(f"runs more than {MAX_STEPS:,} loop iterations and calls")


# -- measuring values


def _measure(value: Any, limit: int = MAX_VALUE) -> tuple[int, int]:
    """(about how many characters ``str(value)`` has, nesting depth); stops counting past ``limit``.

    Containers are walked (the walk is charged to the render's budget), so a list holding
    one big string many times is as big as its text would be. Objects count their
    attributes; lazy iterators count as empty (what they yield is measured where used).
    """
    budget = _BUDGET.get()
    if type(value) is str:
        # Most of what is measured is one piece of text (every output value of a prompt):
        # the walk below would give the same answer, a step at a time.
        if budget is not None:
            budget.walk -= 1
            if budget.walk < 0:
                raise TemplateLimit("measures too much data (its values are too large or too many)")
        return len(value), 0
    size, depth, walked = 0, 0, 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack and size <= limit:
        item, level = stack.pop()
        walked += 1
        depth = max(depth, level)
        if isinstance(item, str):
            size += len(item) + (2 if level else 0)
        elif isinstance(item, (bytes, bytearray)):
            size += 4 * len(item) + 3
        elif isinstance(item, bool) or item is None:
            size += 5
        elif isinstance(item, int):
            size += item.bit_length() // 3 + 2
        elif isinstance(item, (float, complex)):
            size += 24
        elif isinstance(item, Undefined):
            pass
        elif isinstance(item, dict):
            size += 2 + 4 * len(item)
            stack.extend((x, level + 1) for pair in item.items() for x in pair)
        elif isinstance(item, (list, tuple, set, frozenset)):
            size += 2 + 2 * len(item)
            stack.extend((x, level + 1) for x in item)
        elif isinstance(item, Namespace):
            stack.append((object.__getattribute__(item, "_Namespace__attrs"), level + 1))
        else:
            size += 16
            try:
                fields = vars(item) if not callable(item) else None
            except TypeError:  # no __dict__ (slots, builtins)
                fields = None
            if fields:
                stack.append((fields, level + 1))
    if budget is not None:
        budget.walk -= walked
        if budget.walk < 0:
            raise TemplateLimit("measures too much data (its values are too large or too many)")
    return size, depth


def _size(value: Any) -> int:
    return _measure(value)[0]


def _check_size(estimate: int, what: str) -> None:
    if estimate > MAX_VALUE:
        raise TemplateLimit(f"{what} would build about {estimate:,} characters (limit {MAX_VALUE:,})")


def _number(value: Any) -> int:
    return abs(value) if isinstance(value, int) and not isinstance(value, bool) else 0


# -- size estimates of operations that can grow text far beyond their inputs

_FORMAT_NUMBER = re.compile(r"\d+")
_PRINTF_FIELD = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?[a-zA-Z%]")


def _args_of(values: Any) -> list[Any]:
    if isinstance(values, dict):
        return list(values.values())
    if isinstance(values, tuple):
        return list(values)
    return [values]


def _printf_estimate(fmt: str, values: Any) -> int:
    args = _args_of(values)
    biggest = max((_size(a) for a in args), default=0)
    star = sum(_number(a) for a in args)
    total = len(fmt)
    for field in _PRINTF_FIELD.finditer(fmt):
        total += biggest
        for spec in field.groups():
            total += star if spec == "*" else int(spec or 0)
    return total


def _format_estimate(fmt: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    values = list(args) + list(kwargs.values())
    biggest = max((_size(v) for v in values), default=0)
    nested = sum(_number(v) for v in values)
    total = 0
    for literal, field, spec, _conversion in string.Formatter().parse(fmt):
        total += len(literal)
        if field is not None:
            total += biggest + sum(int(n) for n in _FORMAT_NUMBER.findall(spec or ""))
            total += nested * (spec or "").count("{")
    return total


def _lines(text: Any) -> int:
    return text.count("\n") + 1 if isinstance(text, str) else _size(text)


def _join_estimate(items: list[Any], sep: Any) -> int:
    return sum(_size(x) for x in items) + len(items) * _size(sep)


def _replace_estimate(text: Any, old: Any, new: Any) -> int:
    if not isinstance(text, str):
        return _size(text)
    hits = text.count(old) if isinstance(old, str) and old else len(text) + 1
    return len(text) + hits * _size(new)


def _tojson_estimate(a: dict[str, Any]) -> int:
    size, depth = _measure(a["value"])
    return size * (2 + _number(a.get("indent")) * (depth + 1))


def _pprint_estimate(a: dict[str, Any]) -> int:
    size, depth = _measure(a["value"])
    return size * (2 + depth)


# Filter name -> estimate of its result from its bound arguments.
_FILTER_ESTIMATES: dict[str, Callable[[dict[str, Any]], int]] = {
    "center": lambda a: max(_size(a["value"]), _number(a.get("width", 80))),
    "indent": lambda a: _size(a["s"]) + _lines(a["s"]) * (
        _number(a.get("width", 4)) if isinstance(a.get("width", 4), int) else _size(a.get("width"))),
    "wordwrap": lambda a: _size(a["s"]) * (1 + _size(a.get("wrapstring") or "\n")),
    "join": lambda a: _join_estimate(a["value"], a.get("d", "")),
    "replace": lambda a: _replace_estimate(a["s"], a["old"], a["new"]),
    "format": lambda a: _printf_estimate(str(a["value"]), a.get("kwargs") or a.get("args", ())),
    "tojson": lambda a: _tojson_estimate(a),
    "pprint": lambda a: _pprint_estimate(a),
    "batch": lambda a: _size(a["value"]) + _number(a["linecount"]) * (2 + _size(a.get("fill_with"))),
    "slice": lambda a: _size(a["value"]) + _number(a["slices"]) * (2 + _size(a.get("fill_with"))),
    "urlize": lambda a: _size(a["value"]) * (5 + _size(a.get("target")) + _size(a.get("rel"))),
    "sum": lambda a: _sum_estimate(a),
}
_MATERIALIZE = {"join": "value"}  # filters whose iterable is turned into a list first, to be measured

# str method name -> estimate of its result from (the string, args).
_METHOD_ESTIMATES: dict[str, Callable[[str, tuple[Any, ...]], int]] = {
    "center": lambda s, a: max(len(s), _number(a[0]) if a else 0),
    "ljust": lambda s, a: max(len(s), _number(a[0]) if a else 0),
    "rjust": lambda s, a: max(len(s), _number(a[0]) if a else 0),
    "zfill": lambda s, a: max(len(s), _number(a[0]) if a else 0),
    "expandtabs": lambda s, a: len(s) + s.count("\t") * (_number(a[0]) if a else 8),
    "replace": lambda s, a: _replace_estimate(s, a[0], a[1]) if len(a) >= 2 else len(s),
    "join": lambda s, a: _join_estimate(a[0], s) if a else 0,
    "translate": lambda s, a: len(s) * (1 + (_size(a[0]) if a else 0)),
}


def _sum_estimate(arguments: dict[str, Any]) -> int:
    # Summing lists or strings is quadratic in Python; prompts only need numbers.
    if not isinstance(arguments.get("start", 0), (int, float)):
        raise TemplateLimit("sums lists or strings with the 'sum' filter (only numbers can be summed)")
    return 0


def _binop_estimate(operator: str, left: Any, right: Any) -> None:
    sequence = (str, list, tuple, bytes)
    if operator == "*":
        if isinstance(left, sequence) and isinstance(right, int):
            _check_size(_size(left) * max(right, 0), "'*'")
        elif isinstance(right, sequence) and isinstance(left, int):
            _check_size(_size(right) * max(left, 0), "'*'")
        elif isinstance(left, int) and isinstance(right, int):
            _check_bits(left.bit_length() + right.bit_length())
    elif operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
        _check_bits(int(right * math.log2(abs(left))) + 1)
    elif operator == "+" and isinstance(left, sequence) and isinstance(right, sequence):
        _check_size(_size(left) + _size(right), "'+'")
    elif operator == "%" and isinstance(left, str):
        _check_size(_printf_estimate(left, right), "'%' formatting")


def _check_bits(bits: int) -> None:
    if bits > MAX_INT_BITS:
        raise TemplateLimit(f"computes a number of about {bits:,} bits (limit {MAX_INT_BITS:,})")


def _limited_range(*args: int) -> range:
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise TemplateLimit(f"asks for range() of {len(numbers):,} items (limit {MAX_RANGE:,})")
    return numbers


def _limited_lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    _check_size(_number(n) * _number(max) * 12, "lipsum()")
    return generate_lorem_ipsum(n, html, min, max)


# The kinds of object jinja's is_internal_attribute treats specially (jinja2/sandbox.py).
_INTERNAL_KINDS = (types.FunctionType, types.MethodType, type, types.CodeType, types.TracebackType, types.FrameType,
                   types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


_ORDINARY: dict[type, bool] = {}


def _ordinary(cls: type) -> bool:
    """Whether instances of ``cls`` are none of the kinds jinja guards attribute by attribute.

    A template reads attributes of the same few classes thousands of times per run (each
    post's ``text``, ``rank``, ...); asking jinja's chain of ``isinstance`` checks every
    time was a tenth of rendering a profile prompt.
    """
    known = _ORDINARY.get(cls)
    if known is None:
        if len(_ORDINARY) >= 1024:  # classes made on the fly must not grow it without end
            _ORDINARY.clear()
        known = _ORDINARY[cls] = not issubclass(cls, _INTERNAL_KINDS)
    return known


def _jinja_lead(args: tuple[Any, ...]) -> int:
    """1 if a filter was called with jinja's context / eval context / environment first (not data)."""
    return int(bool(args) and isinstance(args[0], (Context, EvalContext, SandboxedEnvironment)))


class LimitedSandbox(SandboxedEnvironment):
    """jinja2's sandbox plus size and work limits (module docstring); templates come from :func:`prepare`."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, **options: Any) -> None:
        super().__init__(finalize=self._count_output, **options)
        self.filters = {name: self._guarded_filter(name, fn) for name, fn in self.filters.items()}
        self.filters["_prb_loop"] = _counted_loop
        self.filters["_prb_concat"] = _checked_concat
        self.globals["range"] = _limited_range
        self.globals["lipsum"] = _limited_lipsum

    # Every piece of output (literal text too, see prepare) passes through here before it
    # becomes text.
    @pass_context
    def _count_output(self, context: Context, value: Any) -> Any:
        budget = _BUDGET.get()
        if budget is not None:
            budget.output -= _measure(value)[0]  # not _size: one call less per piece, dozens per prompt
            if budget.output < 0:
                raise TemplateLimit(f"produces more than {MAX_OUTPUT:,} characters")
        else:
            _check_size(_size(value), "an output value")
        return value

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """A binary operator, refused when its result would pass the size limits."""
        _binop_estimate(operator, left, right)
        return super().call_binop(context, operator, left, right)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        """Jinja's rule, answered from the type for objects of an ordinary class (see :func:`_ordinary`)."""
        cls = type(obj)
        if _ordinary(cls) and obj.__class__ is cls:
            # jinja's is_internal_attribute then reduces to its last line (a "__" name), and
            # is_safe_attribute also refuses every other "_" name.
            return not attr.startswith("_")
        return super().is_safe_attribute(obj, attr, value)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """``str.format`` and ``format_map``, refused when the output would pass the size limit."""
        if not callable(value):  # data (text, numbers): never a bound format method
            return None
        wrapper = super().wrap_str_format(value)
        if wrapper is None:
            return None
        fmt = value.__self__
        is_map = value.__name__ == "format_map"

        @functools.wraps(wrapper)
        def checked(*args: Any, **kwargs: Any) -> str:
            if is_map:
                mapping = args[0] if args else {}
                estimate = _format_estimate(fmt, (), dict(mapping) if isinstance(mapping, dict) else {})
            else:
                estimate = _format_estimate(fmt, args, kwargs)
            _check_size(estimate, "str.format()")
            return wrapper(*args, **kwargs)

        return checked

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        """Every call from a template counts one step; calls that would build oversized values are refused."""
        _step()
        owner = getattr(__obj, "__self__", None)
        owner = owner if isinstance(owner, (str, list, dict, set, bytes)) else None
        name = getattr(__obj, "__name__", "")
        if isinstance(owner, str) and name == "join" and args:
            args = (list(args[0]),) + args[1:]
        _check_size(_size(owner) + _size(list(args)) + _size(kwargs), f"calling {name or 'a function'}()")
        if isinstance(owner, str) and name in _METHOD_ESTIMATES:
            _check_size(_METHOD_ESTIMATES[name](owner, args), f"str.{name}()")
        result = super().call(__context, __obj, *args, **kwargs)
        _check_size(_size(result), f"{name or 'a call'}()")
        if owner is not None:
            _check_size(_size(owner), f"{name}()")  # list.append / extend grew the list in place
        return result

    @staticmethod
    def _guarded_filter(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        estimate = _FILTER_ESTIMATES.get(name)
        materialize = _MATERIALIZE.get(name)
        signature = None
        if estimate or materialize:
            # Bind arguments by name against the plain function, without jinja's leading
            # context / environment parameter (it is passed separately).
            plain = inspect.unwrap(fn)
            signature = inspect.signature(plain)
            if getattr(plain, "jinja_pass_arg", None) is not None:
                signature = signature.replace(parameters=list(signature.parameters.values())[1:])

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            lead, data = args[:_jinja_lead(args)], args[_jinja_lead(args):]
            if signature is not None:
                bound = signature.bind(*data, **kwargs)
                if materialize and not isinstance(bound.arguments.get(materialize), Undefined):
                    bound.arguments[materialize] = list(bound.arguments[materialize])
                data, kwargs = bound.args, bound.kwargs
            _check_size(_size(list(data)) + _size(kwargs), f"the '{name}' filter")
            if estimate:
                _check_size(estimate(bound.arguments), f"the '{name}' filter")
            result = fn(*lead, *data, **kwargs)
            _check_size(_size(result), f"the '{name}' filter")
            return result

        return guarded


@pass_context
def _counted_loop(context: Context, iterable: Any) -> Iterator[Any]:
    for item in iterable:
        _step()
        yield item


def _checked_concat(parts: list[Any]) -> str:
    _check_size(sum(_size(p) for p in parts), "'~'")
    return "".join(str(p) for p in parts)


class _Limiter(NodeTransformer):
    """Routes loops, ``~`` and literal text through the sandbox's counters; refuses other files."""

    def visit_Output(self, node: nodes.Output) -> nodes.Output:  # noqa: N802 - jinja's visitor names
        self.generic_visit(node)
        # Literal text as a constant goes through finalize at run time, so it is counted.
        node.nodes = [nodes.Const(n.data, lineno=n.lineno) if isinstance(n, nodes.TemplateData) else n
                      for n in node.nodes]
        return node

    def visit_For(self, node: nodes.For) -> nodes.For:  # noqa: N802 - jinja's visitor names
        self.generic_visit(node)
        node.iter = nodes.Filter(node.iter, "_prb_loop", [], [], None, None, lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Filter:  # noqa: N802 - jinja's visitor names
        self.generic_visit(node)
        return nodes.Filter(nodes.List(node.nodes, lineno=node.lineno), "_prb_concat", [], [], None, None,
                            lineno=node.lineno)

    def _refuse(self, node: nodes.Node) -> None:
        tag = {"Include": "include", "Import": "import", "FromImport": "from ... import",
               "Extends": "extends"}[type(node).__name__]
        raise TemplateFeatureRefused(
            f"uses {{% {tag} %}}, which user templates cannot: a template is one file, so paste the text "
            "you want to share into it (or use a macro defined in the same file)", node.lineno)

    visit_Include = visit_Import = visit_FromImport = visit_Extends = _refuse


def prepare(environment: LimitedSandbox, source: str, filename: str):  # returns a jinja Template
    """Parse and compile ``source`` with the limits in place.

    Args:
        environment: the sandbox.
        source: the template text.
        filename: the file, named in tracebacks (and so in our error lines).

    Raises:
        jinja2.TemplateSyntaxError: the text does not parse.
        TemplateFeatureRefused: it uses include, import or extends.
    """
    tree = environment.parse(source)
    tree = _Limiter().visit(tree)
    tree.set_environment(environment)
    code = environment.compile(tree, filename=filename)
    return environment.template_class.from_code(environment, code, environment.make_globals(None))
